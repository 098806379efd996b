/* sbr CNI plugin: source-based routing for the interface an earlier plugin of the chain set up */
#pragma once

#include "common/cni/plugin.h"

extern const struct cni_plugin sbr_plugin;
