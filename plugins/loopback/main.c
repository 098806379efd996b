/* loopback CNI plugin entry point */
#include "plugins/loopback/loopback.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&loopback_plugin, argc, argv);
}
