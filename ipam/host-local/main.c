/* host-local IPAM plugin entry point */
#include "ipam/host-local/host-local.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&host_local_plugin, argc, argv);
}
