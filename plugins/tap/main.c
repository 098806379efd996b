/* tap CNI plugin entry point */
#include "plugins/tap/tap.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&tap_plugin, argc, argv);
}
