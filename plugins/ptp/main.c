/* ptp CNI plugin entry point */
#include "plugins/ptp/ptp.h"

int main(int argc, char **argv)
{
	return cni_plugin_main(&ptp_plugin, argc, argv);
}
