/* nv-ipam: allocating from this node's IPPool/CIDRPool blocks, without a daemon */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin nvipam_plugin;
