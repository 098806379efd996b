/* Command dispatch: the one place that prints results and CNI errors */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cni/error-json.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/cni/trust.h"
#include "common/cni/version.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json.h"
#include "common/util/log.h"
#include "common/util/nsfd.h"

static void print_usage(const struct cni_plugin *p, FILE *out)
{
	char list[128];

	fprintf(out,
		"Usage: %s [--help|--version]\n"
		"\n"
		"%s\n"
		"\n"
		"%s"
		"  CNI_COMMAND      ADD, DEL, CHECK, STATUS, GC or VERSION\n"
		"  CNI_CONTAINERID  container ID (ADD, DEL, CHECK)\n"
		"%s"
		"  CNI_ARGS         extra K=V;K=V arguments\n"
		"%s"
		"The result (or a CNI error) is printed on stdout; diagnostics go to stderr.\n"
		"The node's settings (which directories a config may name) are read from\n"
		"%s, or the file " TRUST_SETTINGS_ENV " names.\n"
		"CNI spec versions: %s\n"
		"Every field, default and error: docs/%s.md in the source.\n",
		p->name, p->summary,
		p->ipam ? "A CNI IPAM plugin: run by an interface plugin (macvlan, ipoib, host-device)\n"
			  "with the network config on stdin and the runtime's environment variables:\n" :
			  "A CNI plugin: run by a container runtime (or Multus, cnitool) with the network\n"
			  "config on stdin and these environment variables:\n",
		p->ipam ? "  CNI_NETNS        the pod's network namespace, passed on; addresses are\n"
			  "                   allocated, not configured: the interface plugin does that\n"
			  "  CNI_IFNAME       the pod's interface, recorded with its allocation\n" :
			  "  CNI_NETNS        path of the pod network namespace (ADD, CHECK; optional for DEL)\n"
			  "  CNI_IFNAME       interface name inside the pod (ADD, DEL, CHECK)\n",
		p->ipam ? "" : "  CNI_PATH         ':'-separated directories searched for the IPAM plugin\n",
		TRUST_SETTINGS_FILE, cni_version_list(list, sizeof(list)), p->name);
}

/* systemd's convention: 1 to go on (no argument: the CNI protocol), 0 after --help or
 * --version (exit 0), -2 after an unknown argument was told (exit 2). */
static int handle_argv(const struct cni_plugin *p, int argc, char **argv)
{
	char list[128];

	if (argc < 2)
		return 1;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_usage(p, stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-v") == 0) {
		/* Every binary's first line: "<name> (cni-rdma-plugins) <version>"; details after. */
		printf("%s (cni-rdma-plugins) %s\nCNI spec versions: %s\n", p->name, PROJECT_VERSION,
		       cni_version_list(list, sizeof(list)));
		if (p->about_state)
			printf("%s\n", p->about_state);
		return 0;
	}
	fprintf(stderr, "%s: unknown argument \"%s\"\n\n", p->name, argv[1]);
	print_usage(p, stderr);
	return -2;
}

static int read_stdin(char **ret, size_t *ret_len, struct cni_err *err)
{
	int r = file_read_fd(STDIN_FILENO, CNI_JSON_MAX_BYTES, ret, ret_len);

	if (r == -EFBIG)
		return cni_err_set(err, CNI_ERR_DECODE, r,
				   "error unmarshall network config: larger than %u bytes", CNI_JSON_MAX_BYTES);
	if (r == -ENOMEM)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "error reading from stdin: %s", strerror(-r));
	return 0;
}

static void print_version(void)
{
	char list[128];

	printf("{\"cniVersion\":\"%s\",\"supportedVersions\":%s}\n", CNI_VERSION_CURRENT,
	       cni_version_list(list, sizeof(list)));
}

static int check_command_version(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *need = NULL;

	switch (ctx->env.command) {
	case CNI_CMD_CHECK:
		need = "0.4.0";
		break;
	case CNI_CMD_STATUS:
	case CNI_CMD_GC:
		need = "1.1.0";
		break;
	case CNI_CMD_NONE:
	case CNI_CMD_ADD:
	case CNI_CMD_DEL:
	case CNI_CMD_VERSION:
	case CNI_CMD_UNKNOWN:
		break;
	}
	if (need && cni_version_cmp(ctx->conf.cni_version, need) < 0)
		return cni_err_set(err, CNI_ERR_INCOMPATIBLE_VERSION, -EINVAL,
				   "config version does not allow %s (it needs cniVersion %s or later, the config has %s)",
				   ctx->env.command_name, need, ctx->conf.cni_version);
	return 0;
}

/* A refusal met by a user who is not root: what a runtime would have given the plugin. */
static void hint_privileges(struct cni_err *err)
{
	size_t n = strnlen(err->msg, sizeof(err->msg));

	if ((err->errnum == -EPERM || err->errnum == -EACCES) && geteuid() != 0)
		snprintf(err->msg + n, sizeof(err->msg) - n,
			 " (not root: a CNI plugin needs CAP_SYS_ADMIN and CAP_NET_ADMIN, as runtimes run it)");
}

void cni_plugin_open_netns(struct cni_ctx *ctx)
{
	ctx->netns_fd = -1;
	ctx->netns_err = *ctx->env.netns ? nsfd_open(ctx->env.netns, &ctx->netns_fd) : 0;
}

/* Skel's guard against configuring the runtime's own netns, run before acting. */
static int check_netns_not_own(const struct cni_ctx *ctx, struct cni_err *err)
{
	/* A netns that cannot be opened is the plugin's to report (or, on DEL, to accept). */
	if (ctx->env.netns_override || ctx->netns_fd < 0)
		return 0;
	if (nsfd_is_current(ctx->netns_fd) == 1)
		return cni_err_set(err, CNI_ERR_INVALID_NETNS, -EINVAL,
				   "plugin's netns and netns from CNI_NETNS should not be the same");
	return 0;
}

int cni_plugin_setup_logging(const char *prog, const char *file, bool node_file,
			     const char *level_name, enum cni_command cmd, struct cni_err *err)
{
	enum log_level level = LOG_LEVEL_INFO;
	struct cni_err e = { 0 };
	int fd = -1;
	int r;

	if (level_name && log_level_parse(level_name, &level) < 0)
		level = LOG_LEVEL_INFO;
	log_setup(prog, level, LOG_LEVEL_WARNING, -1);
	if (!file || !*file)
		return 0;
	if (node_file)
		r = trust_open_file(TRUST_LOG, "logFile", file, O_WRONLY | O_APPEND | O_CREAT, 0600,
				    &fd, &e);
	else
		r = trust_open_log("logFile", file, &fd, &e);
	if (r >= 0) {
		log_setup(prog, level, LOG_LEVEL_WARNING, fd);
		return 0;
	}
	/* A refused path is the config's fault; DEL must still clean up after it. */
	if (e.code == CNI_ERR_INVALID_CONFIG && cmd != CNI_CMD_DEL) {
		*err = e;
		return r;
	}
	log_warning("logFile not used (warnings and errors go to stderr, nothing else is logged): %s",
		    r == -ENOENT ? "its directory does not exist" : e.msg);
	return 0;
}

/* Buffered output fails at the flush: a full or closed stdout shows only there. */
static int result_write(const char *out, struct cni_err *err)
{
	if (printf("%s\n", out) < 0 || fflush(stdout) != 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot write the result to stdout: %s",
				   strerror(errno));
	return 0;
}

/*
 * An ADD whose result the runtime never reads is a failure to the runtime, which
 * then may never send its DEL: what the ADD made is released here, as DEL would.
 */
static void add_undo(const struct cni_plugin *p, struct cni_ctx *ctx)
{
	struct cni_err e = { 0 };

	ctx->env.command = CNI_CMD_DEL;
	ctx->env.command_name = cni_command_name(CNI_CMD_DEL);
	if (p->del(ctx, &e) < 0)
		log_error("undoing the ADD failed: %s%s%s", e.msg, e.details[0] ? ": " : "", e.details);
	ctx->env.command = CNI_CMD_ADD;
	ctx->env.command_name = cni_command_name(CNI_CMD_ADD);
}

static int run(const struct cni_plugin *p, struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_free_ char *input = NULL, *out = NULL;
	struct cni_result res = { 0 };
	size_t input_len = 0;
	int r;

	r = read_stdin(&input, &input_len, err);
	if (r < 0)
		return r;
	r = cni_conf_parse(input, input_len, &ctx->conf, err);
	if (r < 0)
		return r;
	/* conf keeps pointers into input for IPAM delegation. */
	ctx->conf.raw = input;
	if ((!p->ipam &&
	     (r = cni_plugin_setup_logging(p->name, ctx->conf.log_file, false, ctx->conf.log_level,
					   ctx->env.command, err)) < 0) ||
	    (r = check_command_version(ctx, err)) < 0)
		goto out;
	if (ctx->env.command == CNI_CMD_ADD || ctx->env.command == CNI_CMD_DEL ||
	    ctx->env.command == CNI_CMD_CHECK)
		cni_plugin_open_netns(ctx);
	if (ctx->env.command == CNI_CMD_ADD || ctx->env.command == CNI_CMD_DEL)
		if ((r = check_netns_not_own(ctx, err)) < 0)
			goto out;
	if ((r = cni_args_parse(ctx->env.args, &ctx->args, err)) < 0)
		goto out;

	log_debug("%s container=%s netns=%s ifname=%s network=%s version=%s",
		  ctx->env.command_name, ctx->env.container_id, ctx->env.netns, ctx->env.ifname,
		  ctx->conf.name, ctx->conf.cni_version);
	switch (ctx->env.command) {
	case CNI_CMD_ADD:
		r = p->add(ctx, &res, err);
		if (r >= 0) {
			snprintf(res.cni_version, sizeof(res.cni_version), "%s", ctx->conf.cni_version);
			r = cni_result_to_json(&res, ctx->conf.cni_version, &out, err);
			if (r >= 0)
				r = result_write(out, err);
			if (r < 0)
				add_undo(p, ctx);
		}
		cni_result_free(&res);
		break;
	case CNI_CMD_DEL:
		r = p->del(ctx, err);
		break;
	case CNI_CMD_CHECK:
		r = p->check(ctx, err);
		break;
	/* An IPAM plugin's own ipam.type names itself: it never delegates. */
	case CNI_CMD_STATUS:
		r = p->status ? p->status(ctx, err) :
		    p->ipam   ? 0 : cni_ipam_run(ctx, CNI_CMD_STATUS, NULL, err);
		break;
	case CNI_CMD_GC:
		r = p->gc ? p->gc(ctx, err) : p->ipam ? 0 : cni_ipam_run(ctx, CNI_CMD_GC, NULL, err);
		break;
	case CNI_CMD_NONE:
	case CNI_CMD_VERSION:
	case CNI_CMD_UNKNOWN:
		r = cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL, "unknown CNI_COMMAND: %s",
				ctx->env.command_name);
		break;
	}
	/* After the command: an IPAM plugin opens its logFile there, and the warning goes in it. */
	cni_conf_keys_warn(ctx->conf.root, p->keys, "config");
out:
	ctx->conf.raw = NULL;
	return r;
}

int cni_plugin_main(const struct cni_plugin *p, int argc, char **argv)
{
	struct cni_ctx ctx = { .netns_fd = -1 };
	struct cni_err err = { 0 };
	char list[128];
	int exit_code;
	int r;

	r = handle_argv(p, argc, argv);
	if (r <= 0)
		return -r;
	/* A runtime shows a plugin's stderr beside its failures: info goes to logFile only. */
	log_setup(p->name, LOG_LEVEL_INFO, LOG_LEVEL_WARNING, -1);

	r = cni_env_load(&ctx.env, &err);
	if (r >= 0 && ctx.env.command == CNI_CMD_NONE) {
		fprintf(stderr, "%s\nCNI protocol versions supported: %s\n", p->summary,
			cni_version_list(list, sizeof(list)));
		return 0;
	}
	if (r >= 0 && ctx.env.command == CNI_CMD_VERSION) {
		_cleanup_free_ char *ignored = NULL;
		size_t ignored_len;

		/*
		 * The runtime writes a config to stdin for VERSION too: read it (its content
		 * does not matter) so that the writer never meets a closed pipe.
		 */
		(void)file_read_fd(STDIN_FILENO, CNI_JSON_MAX_BYTES, &ignored, &ignored_len);
		print_version();
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (r >= 0)
		r = run(p, &ctx, &err);

	if (r < 0) {
		hint_privileges(&err);
		log_error("%s failed (container %s, ifname %s, network %s): %s%s%s",
			  ctx.env.command_name, ctx.env.container_id, ctx.env.ifname,
			  ctx.conf.name ? ctx.conf.name : "?", err.msg, err.details[0] ? ": " : "",
			  err.details);
		cni_err_print(&err, ctx.conf.cni_version, stdout);
		fflush(stdout);
		exit_code = 1;
	} else {
		exit_code = 0;
	}
	if (ctx.netns_fd >= 0)
		close(ctx.netns_fd);
	cni_args_free(&ctx.args);
	cni_conf_free(&ctx.conf);
	return exit_code;
}
