/* ipoib CNI plugin: an IPoIB child of an InfiniBand master, moved into the pod */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin ipoib_plugin;
