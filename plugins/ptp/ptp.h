/* ptp CNI plugin: a veth pair routed point to point between the pod and the node */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin ptp_plugin;
