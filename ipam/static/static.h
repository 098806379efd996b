/* static IPAM plugin: fixed addresses, routes and DNS, nothing allocated or stored */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin static_plugin;
