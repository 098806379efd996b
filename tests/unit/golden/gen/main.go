// Command gen writes the reference result conversions that tests/unit/test-cni-result.c
// compares cni_result_to_json() with. It is the project's own test tool: it only calls
// the reference Go types of Debian's golang-github-appc-cni-dev (libcni 1.1.2:
// pkg/types/create, types/020, types/040, types/100, Result.GetAsVersion) and writes
// what they print, adjusted only in the three ways listed below. It is committed with
// the goldens but is not run by the build or CI.
//
// Regenerate (offline; Debian 12 with golang-go and golang-github-appc-cni-dev):
//
//	cd tests/unit/golden/gen
//	GOPROXY=off GOFLAGS=-mod=mod GOCACHE=$(mktemp -d) go run . ..
//
// or, without modules:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$(mktemp -d) go run main.go ..
//
// Inputs are the files ../result-*.json (any name without ".to-"). For each input X.json
// and each version V of 0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0 it writes
//
//	X.to-V.json        the result converted to V, indented 4 spaces, or
//	X.to-V.error.json  {"error": "<message>"} when libcni refuses the conversion
//	                   (e.g. "cannot convert: no valid IP addresses" for 0.1.0/0.2.0
//	                   from a result without IPs).
//
// Stale X.to-*.json files of the inputs are removed first.
//
// libcni 1.1.2 is older than the reference revision (containernetworking/cni 3f51e88)
// that the reference document (section A6/A7) describes. The generator adjusts its output
// in exactly these documented ways, and nowhere else:
//
//  1. 1.1.0 is not known to libcni 1.1.2. At the reference revision 1.0.0 and 1.1.0
//     results have the same types and 1.0.0 <-> 1.1.0 conversion only sets cniVersion
//     (types100.convertFrom100), so X.to-1.1.0 is X.to-1.0.0 with "cniVersion": "1.1.0"
//     (or the same error).
//  2. Empty dns in 1.x: libcni 1.1.2 prints "dns": {} in 1.0.0 results; at the reference
//     revision types100.Result.MarshalJSON drops an empty dns (A6). 1.x outputs have an
//     empty "dns" object removed. 0.1.0-0.4.0 outputs keep "dns": {} as libcni prints it.
//  3. Fields libcni 1.1.2 does not have (added in later cni releases, present at the
//     reference revision, A6):
//     - routes[].mtu, advmss, priority (ints, omitted when 0) and table, scope (pointers,
//     kept when present, even 0) belong to types.Route, which 0.3.x, 0.4.0 and 1.x
//     results all share, and every converter between those versions copies routes
//     whole (Route.Copy). So for an input of version >= 0.3.0 and an output of
//     version >= 0.3.0, route i of the output gets these fields from route i of the
//     input. Conversion to 0.1.0/0.2.0 builds new routes from Dst and GW only
//     (types040.convertTo02x, A7 "routes[{dst,gw}]"), which libcni 1.1.2 already
//     does, so those outputs are not touched.
//     - interfaces[].mtu (omitted when 0), socketPath, pciID (omitted when "") exist
//     only in types100.Interface; convertInterfaceTo040 drops them (A7). So for an
//     input of version >= 1.0.0 and an output of version >= 1.0.0, interface i of
//     the output gets these fields from interface i of the input.
//     The overlay only adds keys libcni left out; it never changes a value libcni printed.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/pkg/types/create"
	// The result types register their creators and converters when imported.
	_ "github.com/containernetworking/cni/pkg/types/020"
	_ "github.com/containernetworking/cni/pkg/types/040"
	_ "github.com/containernetworking/cni/pkg/types/100"
)

var libcniVersions = []string{"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0"}

// atLeast compares versions of the form X.Y.Z that libcni knows.
func atLeast(v, min string) bool {
	var a, b [3]int
	fmt.Sscanf(v, "%d.%d.%d", &a[0], &a[1], &a[2])
	fmt.Sscanf(min, "%d.%d.%d", &b[0], &b[1], &b[2])
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

func decode(data []byte) (map[string]interface{}, error) {
	var m map[string]interface{}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func list(m map[string]interface{}, key string) []interface{} {
	l, _ := m[key].([]interface{})
	return l
}

func nonzero(v interface{}) bool {
	switch x := v.(type) {
	case json.Number:
		return x.String() != "0"
	case string:
		return x != ""
	case nil:
		return false
	}
	return true
}

// overlay copies the fields of item i of in[key] to item i of out[key] (rule 3).
// keepZero lists the fields that are pointers at the reference revision and so
// are printed even when 0.
func overlay(in, out map[string]interface{}, key string, fields, keepZero []string) {
	src, dst := list(in, key), list(out, key)
	if len(src) != len(dst) {
		panic(fmt.Sprintf("%s: %d in the input but %d in the output", key, len(src), len(dst)))
	}
	for i := range src {
		s, d := src[i].(map[string]interface{}), dst[i].(map[string]interface{})
		for _, f := range fields {
			v, ok := s[f]
			if _, done := d[f]; !ok || done {
				continue
			}
			keep := nonzero(v)
			for _, z := range keepZero {
				keep = keep || (f == z && v != nil)
			}
			if keep {
				d[f] = v
			}
		}
	}
}

func convert(input []byte, raw map[string]interface{}, inVer, toVer string) (map[string]interface{}, error) {
	res, err := create.CreateFromBytes(input)
	if err != nil {
		panic(fmt.Sprintf("input not accepted by libcni: %v", err))
	}
	conv, err := res.GetAsVersion(toVer)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(conv)
	if err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	out, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("re-decode: %w", err)
	}
	if atLeast(toVer, "1.0.0") { // rule 2
		if dns, ok := out["dns"].(map[string]interface{}); ok && len(dns) == 0 {
			delete(out, "dns")
		}
	}
	if atLeast(inVer, "0.3.0") && atLeast(toVer, "0.3.0") { // rule 3, routes
		overlay(raw, out, "routes", []string{"mtu", "advmss", "priority", "table", "scope"},
			[]string{"table", "scope"})
	}
	if atLeast(inVer, "1.0.0") && atLeast(toVer, "1.0.0") { // rule 3, interfaces
		overlay(raw, out, "interfaces", []string{"mtu", "socketPath", "pciID"}, nil)
	}
	return out, nil
}

func write(path string, v interface{}) {
	data, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		panic(err)
	}
	fmt.Println("wrote", path)
}

func main() {
	dir := ".."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	inputs, err := filepath.Glob(filepath.Join(dir, "result-*.json"))
	if err != nil {
		panic(err)
	}
	for _, in := range inputs {
		if strings.Contains(filepath.Base(in), ".to-") {
			continue
		}
		base := strings.TrimSuffix(in, ".json")
		stale, _ := filepath.Glob(base + ".to-*.json")
		for _, s := range stale {
			os.Remove(s)
		}
		input, err := os.ReadFile(in)
		if err != nil {
			panic(err)
		}
		raw, err := decode(input)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", in, err))
		}
		inVer, err := create.DecodeVersion(input)
		if err != nil {
			panic(err)
		}
		var last map[string]interface{}
		var lastErr error
		for _, v := range libcniVersions {
			last, lastErr = convert(input, raw, inVer, v)
			if lastErr != nil {
				write(base+".to-"+v+".error.json", map[string]string{"error": lastErr.Error()})
			} else {
				write(base+".to-"+v+".json", last)
			}
		}
		// rule 1: 1.1.0 is 1.0.0 (the last version above) with another cniVersion
		if lastErr != nil {
			write(base+".to-1.1.0.error.json", map[string]string{"error": lastErr.Error()})
		} else {
			last["cniVersion"] = "1.1.0"
			write(base+".to-1.1.0.json", last)
		}
	}
}
