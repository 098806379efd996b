/* host-local IPAM plugin: addresses from ranges, held in a directory of files on the node */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin host_local_plugin;
