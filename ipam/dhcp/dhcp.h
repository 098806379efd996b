/* dhcp IPAM plugin: addresses leased from a DHCP server by the dhcp daemon */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin dhcp_plugin;
