/* static IPAM plugin entry point */
#include "ipam/static/static.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&static_plugin, argc, argv);
}
