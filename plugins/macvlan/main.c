/* macvlan CNI plugin entry point */
#include "plugins/macvlan/macvlan.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&macvlan_plugin, argc, argv);
}
