/* IPAM delegation: run ipam.type from CNI_PATH with the same stdin */
#pragma once

#include "common/cni/env.h"

struct cni_ctx;
struct cni_err;
struct cni_result;

/**
 * cni_ipam_run() - run a command on the config's IPAM plugin: the one way to IPAM
 * @ctx: context: ipam.type names the plugin, searched in CNI_PATH; the config's
 *       bytes are its stdin; its environment is ours with CNI_COMMAND replaced
 * @cmd: command to run
 * @ret: the parsed result for ADD, NULL otherwise
 * @err: the IPAM plugin's own error (code passed through), or code 101/7
 *
 * A config without IPAM ("ipam": {} or none) has nothing to run: success. An
 * ADD whose plugin ran but whose answer cannot be used (it was stopped, or its
 * result does not parse) is undone with cni_ipam_undo() before this returns.
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_ipam_run(const struct cni_ctx *ctx, enum cni_command cmd, struct cni_result *ret,
		 struct cni_err *err);

/**
 * cni_ipam_undo() - IPAM DEL for an ADD that is not to stand
 * @ctx: context
 *
 * A failure is logged, not returned: the ADD's own error is the one to report.
 */
void cni_ipam_undo(const struct cni_ctx *ctx);
