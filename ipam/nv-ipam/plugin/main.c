/* nv-ipam IPAM plugin entry point */
#include "ipam/nv-ipam/plugin/nvipam.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&nvipam_plugin, argc, argv);
}
