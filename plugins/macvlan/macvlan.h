/* macvlan CNI plugin: a macvlan child of a master link, moved into the pod */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin macvlan_plugin;
