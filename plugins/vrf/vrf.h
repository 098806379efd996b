/* vrf CNI meta plugin: the interface of the chain moved into a VRF of the pod */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin vrf_plugin;
