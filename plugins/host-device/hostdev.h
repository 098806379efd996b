/* host-device CNI plugin: moves an existing host netdev (and its RDMA device) into the pod */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin hostdev_plugin;
