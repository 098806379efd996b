/* vlan CNI plugin entry point */
#include "plugins/vlan/vlan.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&vlan_plugin, argc, argv);
}
