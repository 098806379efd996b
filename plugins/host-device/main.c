/* host-device CNI plugin entry point */
#include "plugins/host-device/hostdev.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&hostdev_plugin, argc, argv);
}
