/* vlan CNI plugin: an 802.1Q VLAN link of a master, in the pod */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin vlan_plugin;
