/* portmap CNI plugin entry point */
#include "plugins/portmap/portmap.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&portmap_plugin, argc, argv);
}
