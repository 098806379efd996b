/* vrf CNI plugin entry point */
#include "plugins/vrf/vrf.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&vrf_plugin, argc, argv);
}
