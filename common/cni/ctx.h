/* One CNI invocation: its environment, config, CNI_ARGS and netns */
#pragma once

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/env.h"

struct cni_ctx {
	struct cni_env env;
	struct cni_conf conf;
	struct cni_args args;
	/* CNI_NETNS, opened once per command by cni_plugin_open_netns() */
	int netns_fd;  /* -1 when not open */
	int netns_err; /* why not: nsfd_open()'s negative errno, 0 when CNI_NETNS is empty */
};
