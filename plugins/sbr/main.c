/* sbr CNI plugin entry point */
#include "plugins/sbr/sbr.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&sbr_plugin, argc, argv);
}
