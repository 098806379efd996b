/* tuning CNI meta plugin: sysctls and link attributes of a pod's interface, chained after it */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin tuning_plugin;
