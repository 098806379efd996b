# Sourced by the shell tests and the demo: lets network configs name the test's
# private directories, as a node widens them in its settings file
# (common/cni/trust.h). The file is named by the runtime's environment.
#
# node_settings FILE DIR...: FILE lists each DIR as a log, config and state
# directory; CNI_RDMA_PLUGINS_CONF names it for every plugin run after.
node_settings() {
	local file=$1 list="" d
	shift
	for d in "$@"; do
		list+="${list:+, }\"$d\""
	done
	printf '{"logDirs": [%s], "confDirs": [%s], "stateDirs": [%s]}\n' "$list" "$list" "$list" >"$file"
	chmod 0600 "$file"
	export CNI_RDMA_PLUGINS_CONF=$file
}

# nvipam_node_conf DIR POOL-FILE STORE [MEMBERS]: DIR/nv-ipam.conf naming the node's pool
# file and store (a network config may not: docs/security.md), plus MEMBERS (JSON
# object members, comma first). A network config reaches it with "confDir": DIR.
nvipam_node_conf() {
	printf '{"poolFile": "%s", "storeFile": "%s"%s}\n' "$2" "$3" "${4:-}" >"$1/nv-ipam.conf"
}
