/* bridge CNI plugin: a veth pair from the pod to a Linux bridge of the node */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin bridge_plugin;
