// Command cniclient is the e2e suite's own libcni driver. It loads a network
// configuration list by name from NETCONFPATH and runs ADD, CHECK or DEL for
// one attachment, the way a container runtime would.
//
// Usage: cniclient [--cache-dir DIR] [--timeout SECONDS] add|check|del <network-name> <netns-path>
//
// Environment:
//
//	NETCONFPATH    directory holding *.conflist / *.conf / *.json (default /etc/cni/net.d)
//	CNI_PATH       ':'-separated plugin directories (required)
//	CNI_IFNAME     interface name inside the netns (default eth0)
//	CNI_ARGS       K=V;K=V pairs passed to the plugins
//	CAP_ARGS       JSON object of capability arguments (runtimeConfig)
//	CNI_CACHE_DIR  libcni cache directory, overridden by --cache-dir (default /var/lib/cni)
//
// The container ID is "e2e-" followed by the first 12 bytes, in hex, of the
// SHA-256 of the absolute netns path, so ADD, CHECK and DEL of one netns all
// address the same attachment. ADD prints the result as indented JSON on
// stdout. Any failure prints the error on stderr and exits 1; a usage error
// exits 2.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/containernetworking/cni/libcni"
)

const usage = "usage: cniclient [--cache-dir DIR] [--timeout SECONDS] add|check|del <network-name> <netns-path>"

type options struct {
	cacheDir string
	timeout  time.Duration
	command  string
	network  string
	netns    string
}

func parseOptions(argv []string) (*options, error) {
	o := &options{cacheDir: os.Getenv("CNI_CACHE_DIR"), timeout: 120 * time.Second}
	var pos []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		value := func(flag string) (string, error) {
			if v := strings.TrimPrefix(a, flag+"="); v != a {
				return v, nil
			}
			if i+1 >= len(argv) {
				return "", fmt.Errorf("%s needs a value", flag)
			}
			i++
			return argv[i], nil
		}
		switch {
		case a == "-h" || a == "--help":
			return nil, errors.New("help")
		case a == "--cache-dir" || strings.HasPrefix(a, "--cache-dir="):
			v, err := value("--cache-dir")
			if err != nil {
				return nil, err
			}
			o.cacheDir = v
		case a == "--timeout" || strings.HasPrefix(a, "--timeout="):
			v, err := value("--timeout")
			if err != nil {
				return nil, err
			}
			secs, err := strconv.Atoi(v)
			if err != nil || secs <= 0 {
				return nil, fmt.Errorf("invalid --timeout %q", v)
			}
			o.timeout = time.Duration(secs) * time.Second
		case a == "--":
			pos = append(pos, argv[i+1:]...)
			i = len(argv)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			return nil, fmt.Errorf("unknown option %q", a)
		default:
			pos = append(pos, a)
		}
	}
	if len(pos) != 3 {
		return nil, errors.New("expected a command, a network name and a netns path")
	}
	o.command, o.network, o.netns = pos[0], pos[1], pos[2]
	switch o.command {
	case "add", "check", "del":
	default:
		return nil, fmt.Errorf("unknown command %q", o.command)
	}
	return o, nil
}

// parseCNIArgs splits "K=V;K=V" into pairs. Empty segments (a trailing ';')
// are skipped; a segment without '=' or with an empty key or value is an error.
func parseCNIArgs(s string) ([][2]string, error) {
	var pairs [][2]string
	for _, seg := range strings.Split(s, ";") {
		if seg == "" {
			continue
		}
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("invalid CNI_ARGS pair %q", seg)
		}
		pairs = append(pairs, [2]string{k, v})
	}
	return pairs, nil
}

func containerID(netnsAbs string) string {
	sum := sha256.Sum256([]byte(netnsAbs))
	return "e2e-" + hex.EncodeToString(sum[:12])
}

func run(o *options) error {
	confDir := os.Getenv("NETCONFPATH")
	if confDir == "" {
		confDir = "/etc/cni/net.d"
	}
	cniPath := os.Getenv("CNI_PATH")
	if cniPath == "" {
		return errors.New("CNI_PATH is not set")
	}
	list, err := libcni.LoadConfList(confDir, o.network)
	if err != nil {
		return fmt.Errorf("loading network %q from %s: %w", o.network, confDir, err)
	}

	netns, err := filepath.Abs(o.netns)
	if err != nil {
		return fmt.Errorf("netns path %q: %w", o.netns, err)
	}
	ifName := os.Getenv("CNI_IFNAME")
	if ifName == "" {
		ifName = "eth0"
	}
	args, err := parseCNIArgs(os.Getenv("CNI_ARGS"))
	if err != nil {
		return err
	}
	var capArgs map[string]interface{}
	if s := os.Getenv("CAP_ARGS"); s != "" {
		if err := json.Unmarshal([]byte(s), &capArgs); err != nil {
			return fmt.Errorf("CAP_ARGS is not a JSON object: %w", err)
		}
	}

	rt := &libcni.RuntimeConf{
		ContainerID:    containerID(netns),
		NetNS:          netns,
		IfName:         ifName,
		Args:           args,
		CapabilityArgs: capArgs,
	}
	var cni *libcni.CNIConfig
	dirs := filepath.SplitList(cniPath)
	if o.cacheDir != "" {
		cni = libcni.NewCNIConfigWithCacheDir(dirs, o.cacheDir, nil)
	} else {
		cni = libcni.NewCNIConfig(dirs, nil)
	}

	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()

	switch o.command {
	case "add":
		res, err := cni.AddNetworkList(ctx, list, rt)
		if err != nil {
			return err
		}
		out, err := json.MarshalIndent(res, "", "    ")
		if err != nil {
			return fmt.Errorf("encoding result: %w", err)
		}
		_, err = fmt.Printf("%s\n", out)
		return err
	case "check":
		return cni.CheckNetworkList(ctx, list, rt)
	default:
		return cni.DelNetworkList(ctx, list, rt)
	}
}

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		if err.Error() != "help" {
			fmt.Fprintf(os.Stderr, "cniclient: %v\n", err)
		}
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "cniclient %s %s: %v\n", o.command, o.network, err)
		os.Exit(1)
	}
}
