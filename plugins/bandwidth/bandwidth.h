/* bandwidth CNI meta plugin: a chained pod's traffic shaped on its veth's host side */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin bandwidth_plugin;
