/* firewall CNI meta plugin: a chained pod's addresses let through the node's firewall */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin firewall_plugin;
