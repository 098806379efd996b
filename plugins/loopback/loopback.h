/* loopback CNI plugin: the pod's lo up, its addresses in the result */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin loopback_plugin;
