/* dhcp IPAM plugin entry point, and its daemon's ("dhcp daemon") */
#include <string.h>

#include "ipam/dhcp/daemon.h"
#include "ipam/dhcp/dhcp.h"

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "daemon") == 0)
		return dhcp_daemon_main(argc - 2, argv + 2);
	return cni_plugin_main(&dhcp_plugin, argc, argv);
}
