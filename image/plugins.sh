# The plugin images' binaries: the one list the scripts that build and test the images
# read (image/build.sh, image/multiarch.sh, tests/image/image.sh, tests/image/multiarch.sh,
# tests/run-all.sh). tests/image/plugins-list.sh checks it against meson's registry of
# plugins and cni-install's. Sourced, not run.

# Each image's plugins, in the order cni-install installs and names them.
declare -A image_plugins=(
	[cni-rdma-plugins]="macvlan host-device tuning sbr static dummy tap loopback host-local portmap bandwidth firewall ipvlan vlan vrf bridge ptp dhcp"
	[cni-rdma-ipoib]="ipoib")
# Where a build directory keeps each of them, and cni-install.
declare -A plugin_built=([macvlan]=plugins/macvlan/macvlan [ipoib]=plugins/ipoib/ipoib
	[host-device]=plugins/host-device/host-device [tuning]=plugins/tuning/tuning
	[sbr]=plugins/sbr/sbr [static]=ipam/static/static [dummy]=plugins/dummy/dummy
	[tap]=plugins/tap/tap [loopback]=plugins/loopback/loopback
	[host-local]=ipam/host-local/host-local [portmap]=plugins/portmap/portmap
	[bandwidth]=plugins/bandwidth/bandwidth [firewall]=plugins/firewall/firewall
	[ipvlan]=plugins/ipvlan/ipvlan [vlan]=plugins/vlan/vlan [vrf]=plugins/vrf/vrf
	[bridge]=plugins/bridge/bridge [ptp]=plugins/ptp/ptp [dhcp]=ipam/dhcp/dhcp
	[cni-install]=tools/cni-install/cni-install)
