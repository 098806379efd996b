#!/bin/bash
# PID 1 of a user-mode Linux guest started by tests/kernel/uml.sh: sets up the
# little a netns suite needs on the host's root (shared read-only through
# hostfs), runs the suites named on the kernel command line, writes each one's
# output and exit status to the host, and powers off.
#
# The kernel hands the command line's unknown key=value words to init as its
# environment: uml_src (the source tree), uml_bin (the plugins and test-net),
# uml_ref (the reference CNI plugins), uml_shared (../shared, when there), uml_out (the host directory for
# results), uml_mods (the package's modules directory), uml_suites
# (comma-separated suite names), uml_timeout (seconds per suite),
# uml_versions (comma-separated CNI versions of the suites' full rounds),
# uml_refcni (the reference plugins of containernetworking/plugins, unpacked
# by run.sh; empty when ../shared has none), uml_bench (ITERATIONS,WARMUP of
# the bench-link suite).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
umask 022

# Everything below runs once; whatever happens, the guest ends (a PID 1 that
# exits panics the kernel, which run.sh would only see as a timeout).
halt() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 10
}
trap halt EXIT

mount -t proc proc /proc
mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
# Bash's process substitution and many scripts read /dev/fd, /dev/stdin ...;
# devtmpfs has none of them (udev makes them on a real system).
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
# The root is read-only: what must be written is on tmpfs. /run holds the
# netns bind mounts (/var/run is a link to it), /tmp the tests' work dirs.
mount -t tmpfs -o mode=1777 tmp /tmp
mount -t tmpfs -o mode=755 run /run
mkdir -p /run/netns /run/lock
mkdir -p /tmp/out
if ! mount -t hostfs -o "$uml_out" hostout /tmp/out; then
	echo "guest: cannot mount the host's $uml_out" >&2
	exit 1
fi
out=/tmp/out
exec >"$out/guest.log" 2>&1
echo "guest: $(uname -r), $(nproc) CPU, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)"

# Modules come from the package, not from the host's /lib/modules: modprobe
# reads <dir>/lib/modules/<release>, and the kernel's own module requests go
# through the same wrapper.
mods=/tmp/modroot/lib/modules
mkdir -p "$mods"
ln -s "$uml_mods" "$mods/$(uname -r)"
printf '#!/bin/sh\nexec /usr/sbin/modprobe -d /tmp/modroot "$@"\n' >/tmp/modprobe
chmod 755 /tmp/modprobe
echo /tmp/modprobe >/proc/sys/kernel/modprobe
for m in veth macvlan ipv6 dummy tun bridge ipvlan 8021q vrf; do
	/tmp/modprobe "$m" || echo "guest: modprobe $m failed"
done
ip link set lo up

export NETNS_CNI_VERSIONS=${uml_versions//,/ }
[ -z "${uml_refcni:-}" ] || export CNI_REFERENCE_PLUGINS=$uml_refcni
# Each suite runs under a timeout of its own below: no timeout process per plugin run.
export NETNS_PLUGIN_TIMEOUT=0
# What no kernel decides (a config refused before the kernel is asked) the host run
# covers: the suites that know it leave it out here (ipvlan, vlan, vrf).
export NETNS_KERNEL_ONLY=1
IFS=, read -r -a suites <<<"$uml_suites"
for s in "${suites[@]}"; do
	case $s in
	common-net) cmd=("$uml_bin/test-net") ;;
	macvlan | ipoib | host-device | tuning | sbr | static | dummy | tap | ipvlan | vlan | vrf)
		cmd=(bash "$uml_src/tests/netns/$s.sh" "$uml_bin/$s" "$uml_ref") ;;
	# ipvlan, vlan and vrf beside the reference plugins: figures (tests/bench/run-link.sh).
	bench-link) cmd=(env ITERATIONS="${uml_bench%%,*}" WARMUP="${uml_bench#*,}"
		bash "$uml_src/tests/bench/run-link.sh" "$uml_bin" "${uml_refcni:-/nonexistent}") ;;
	# The guests filter VLANs (the host's kernel may not), and have neither nftables' ip
	# families nor its inet one that the masquerade needs: the rest is the host run's.
	bridge) cmd=(env ${uml_shared:+CNI_SHARED=$uml_shared} BRIDGE_SECTIONS="7 8" bash "$uml_src/tests/netns/$s.sh" "$uml_bin/$s" "$uml_ref") ;;
	# The chains: their other binaries are found beside macvlan.
	multirail) cmd=(env MULTIRAIL_REFERENCE=0 bash "$uml_src/tests/netns/$s.sh" "$uml_bin/macvlan" "$uml_ref") ;;
	*) echo "guest: unknown suite $s"; echo 2 >"$out/$s.rc"; continue ;;
	esac
	start=$(date +%s)
	timeout -k 10 "${uml_timeout:-1800}" "${cmd[@]}" >"$out/$s.log" 2>&1 </dev/null
	rc=$?
	echo "$(($(date +%s) - start))" >"$out/$s.seconds"
	echo "$rc" >"$out/$s.rc"
	echo "guest: $s exited $rc after $(cat "$out/$s.seconds") s"
done
echo done >"$out/done"
