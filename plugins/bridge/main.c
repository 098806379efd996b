/* bridge CNI plugin entry point */
#include "plugins/bridge/bridge.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&bridge_plugin, argc, argv);
}
