/* Command dispatch: the one place that prints results and CNI errors */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/cni/ctx.h"

struct cni_err;
struct cni_result;

struct cni_plugin {
	const char *name;        /* binary name, e.g. "macvlan" */
	const char *summary;     /* one line for --help and the about line, "name: ..." */
	/*
	 * An IPAM plugin: run by an interface plugin, never in the pod's netns. It sets up
	 * logging from its own keys (in the "ipam" section; the top-level logFile is the
	 * interface plugin's): until then warnings and errors go to stderr, nothing else.
	 */
	bool ipam;
	const char *about_state; /* --version: the state formats it reads and writes, NULL for none */
	/*
	 * The keys it reads, by object: a member a letter or two away from one is warned
	 * of (cni_conf_keys_warn()). An IPAM plugin lists no top level (the interface
	 * plugin's keys are there), an interface plugin no "ipam".
	 */
	const struct cni_conf_keys *keys;
	int (*add)(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err);
	int (*del)(const struct cni_ctx *ctx, struct cni_err *err);
	int (*check)(const struct cni_ctx *ctx, struct cni_err *err);
	/* NULL: forwarded to IPAM when there is one, success otherwise (always for an IPAM plugin). */
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
 * cni_plugin_open_netns() - open CNI_NETNS once for ADD, DEL and CHECK
 * @ctx: context; netns_fd and netns_err are set
 *
 * The dispatch does this before the command runs: its guard against the
 * runtime's own netns and the plugin's steps share the one descriptor, which
 * cni_plugin_main() closes. A path that cannot be opened is no error here:
 * the plugin reports it, or on DEL takes it for a netns that is gone.
 */
void cni_plugin_open_netns(struct cni_ctx *ctx);

/**
 * cni_plugin_setup_logging() - the log level and the log file a config asks for
 * @prog: program name for every line
 * @file: the config's logFile, NULL or "" for none
 * @node_file: @file was set by the node's own file (nv-ipam.conf), not by a network
 *             config: it may name any regular file below a log directory; a network
 *             config's only a new file or one the plugins made (trust_open_log())
 * @level_name: the config's logLevel, NULL for info (an unknown level is info)
 * @cmd: the command being run
 * @err: code 7 when the node does not let a config name that file (trust.h),
 *       except for DEL, which logs a warning and goes on to clean up
 *
 * Warnings and errors go to stderr, every line up to the level to the file: a plugin
 * that succeeds prints nothing on stderr. A file that cannot be opened for another
 * reason is a warning: only warnings and errors are logged then, on stderr.
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_plugin_setup_logging(const char *prog, const char *file, bool node_file,
			     const char *level_name, enum cni_command cmd, struct cni_err *err);
