/* dummy CNI plugin entry point */
#include "plugins/dummy/dummy.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&dummy_plugin, argc, argv);
}
