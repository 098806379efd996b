/* portmap CNI meta plugin: host ports forwarded to a chained container's address */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin portmap_plugin;
