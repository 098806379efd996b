/* host-device CNI plugin: moves an existing host netdev (and its RDMA device) into the pod */
#pragma once

#include "common/cni/plugin.h"

/* DEL could not give the device its original name back: a host link has it. */
#define HOSTDEV_ERR_NAME_TAKEN 104

extern const struct cni_plugin hostdev_plugin;
