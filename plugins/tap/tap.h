/* tap CNI plugin: a persistent tap device in the pod, for a VM or a userspace stack to attach to */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin tap_plugin;
