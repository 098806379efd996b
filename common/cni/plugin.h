/* Command dispatch: the one place that prints results and CNI errors */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/env.h"

struct cni_err;
struct cni_iface;
struct cni_result;

struct cni_ctx {
	struct cni_env env;
	struct cni_conf conf;
	struct cni_args args;
};

struct cni_plugin {
	const char *name;        /* binary name, e.g. "macvlan" */
	const char *summary;     /* one line for --help and the about line */
	int (*add)(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err);
	int (*del)(const struct cni_ctx *ctx, struct cni_err *err);
	int (*check)(const struct cni_ctx *ctx, struct cni_err *err);
	/* NULL: forwarded to IPAM when there is one, success otherwise. */
	int (*status)(const struct cni_ctx *ctx, struct cni_err *err);
	int (*gc)(const struct cni_ctx *ctx, struct cni_err *err);
};

/**
 * cni_plugin_main() - run one CNI command as described by the environment
 * @plugin: the plugin's callbacks
 * @argc: from main
 * @argv: from main (--help, --version)
 *
 * Reads and validates the environment and stdin, calls the callback, and
 * prints the result or the error JSON on stdout.
 *
 * Return: the process exit status.
 */
int cni_plugin_main(const struct cni_plugin *plugin, int argc, char **argv);

/**
 * cni_plugin_setup_logging() - the log level and the log file a config asks for
 * @prog: program name for every line
 * @file: the config's logFile, NULL or "" for none
 * @level_name: the config's logLevel, NULL for info (an unknown level is info)
 * @cmd: the command being run
 * @err: code 7 when the node does not let a config name that file (trust.h),
 *       except for DEL, which logs a warning and goes on to clean up
 *
 * A file that cannot be opened for another reason is a warning: logging then
 * goes to stderr only.
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_plugin_setup_logging(const char *prog, const char *file, const char *level_name,
			     enum cni_command cmd, struct cni_err *err);

/**
 * cni_plugin_forward_ipam() - run the command on the IPAM plugin, if the config has one
 * @ctx: context
 * @err: the IPAM error
 *
 * Return: 0 on success or when there is no IPAM, negative errno on failure.
 */
int cni_plugin_forward_ipam(const struct cni_ctx *ctx, struct cni_err *err);

/**
 * cni_plugin_open_netns() - open CNI_NETNS for ADD or CHECK
 * @ctx: context
 * @ret_fd: descriptor, written only on success
 * @err: code 4 (invalid environment) when the path is not an open-able netns
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_plugin_open_netns(const struct cni_ctx *ctx, int *ret_fd, struct cni_err *err);

/**
 * cni_plugin_open_netns_del() - open CNI_NETNS for DEL, where a netns that is gone is no error
 * @ctx: context
 * @ret_fd: descriptor, written only when the netns is there
 * @err: code 4 when the path cannot be opened for another reason
 *
 * Gone means: CNI_NETNS empty, the path missing, or no longer a netns (a
 * leftover file whose netns mount went with the pod).
 *
 * Return: 1 when opened, 0 when the netns is gone, negative errno on failure.
 */
int cni_plugin_open_netns_del(const struct cni_ctx *ctx, int *ret_fd, struct cni_err *err);

/* "cnimv" and the like, then 10 hex digits: IFNAMSIZ - 1 bytes. */
#define CNI_TMP_NAME_PREFIX_LEN 5

/**
 * cni_plugin_tmp_name() - the name a new link of this attachment has until it is renamed
 * @ctx: context (CNI_CONTAINERID and CNI_IFNAME)
 * @prefix: CNI_TMP_NAME_PREFIX_LEN characters saying which plugin made it
 * @buf: output
 * @size: its size, at least IFNAMSIZ
 *
 * Derived from the attachment, the same for its every ADD and DEL: a plugin
 * killed between creating a link and renaming it leaves it under a name the
 * attachment's DEL can find.
 */
void cni_plugin_tmp_name(const struct cni_ctx *ctx, const char *prefix, char *buf, size_t size);

/**
 * cni_plugin_ipam_undo() - release what IPAM ADD reserved, when a later ADD step failed
 * @ctx: context
 *
 * The failure is logged, not returned: the ADD's own error is the one to report.
 */
void cni_plugin_ipam_undo(const struct cni_ctx *ctx);

/**
 * cni_plugin_check_l2_version() - refuse an interface without IPAM where no result can describe it
 * @ctx: context
 * @err: code 7 for cniVersion 0.1.0 and 0.2.0, whose results hold only addresses
 *
 * Called before anything is created, so that an L2 ADD fails cleanly.
 *
 * Return: 0 when the version can carry an interface, -EINVAL otherwise.
 */
int cni_plugin_check_l2_version(const struct cni_ctx *ctx, struct cni_err *err);

/**
 * cni_plugin_prev_iface() - the interface prevResult records for CNI_IFNAME, for CHECK
 * @ctx: context
 * @ret: the interface, written only on success
 * @err: code 7 without a prevResult; 103 when it has no such interface or
 *       records another netns as its sandbox
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_plugin_prev_iface(const struct cni_ctx *ctx, const struct cni_iface **ret,
			  struct cni_err *err);

/**
 * cni_plugin_check_mac() - CHECK that a link has the hardware address prevResult recorded
 * @iface: the interface from prevResult (no mac recorded: nothing to check)
 * @hwaddr: the link's address
 * @len: its length
 * @err: code 103 on a mismatch
 *
 * Return: 0 when it matches, -EINVAL otherwise.
 */
int cni_plugin_check_mac(const struct cni_iface *iface, const uint8_t *hwaddr, size_t len,
			 struct cni_err *err);
