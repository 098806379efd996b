/* ipvlan CNI plugin entry point */
#include "plugins/ipvlan/ipvlan.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&ipvlan_plugin, argc, argv);
}
