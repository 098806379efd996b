/* IPAM delegation: run ipam.type from CNI_PATH with the same stdin */
#pragma once

#include "common/cni/env.h"

struct cni_conf;
struct cni_err;
struct cni_result;

/**
 * cni_ipam_exec() - run the IPAM plugin for a command
 * @env: the plugin's environment (CNI_PATH is searched; CNI_COMMAND is replaced)
 * @conf: config whose ipam.type names the plugin and whose raw bytes are its stdin
 * @cmd: command to run
 * @ret: the parsed result for ADD, NULL otherwise
 * @err: the IPAM plugin's own error (code passed through), or code 101/7
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_ipam_exec(const struct cni_env *env, const struct cni_conf *conf, enum cni_command cmd,
		  struct cni_result *ret, struct cni_err *err);
