/* ipoib CNI plugin entry point */
#include "plugins/ipoib/ipoib.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&ipoib_plugin, argc, argv);
}
