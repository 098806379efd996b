/* dummy CNI plugin: a dummy link in the pod, addressed by IPAM */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin dummy_plugin;
