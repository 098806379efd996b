/* firewall CNI plugin entry point */
#include "plugins/firewall/firewall.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&firewall_plugin, argc, argv);
}
