/* tuning CNI meta plugin entry point */
#include "plugins/tuning/tuning.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&tuning_plugin, argc, argv);
}
