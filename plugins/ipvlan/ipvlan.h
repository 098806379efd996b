/* ipvlan CNI plugin: an ipvlan child of a master link, in the pod */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin ipvlan_plugin;
