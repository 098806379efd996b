/* bandwidth CNI plugin entry point */
#include "plugins/bandwidth/bandwidth.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&bandwidth_plugin, argc, argv);
}
