/* Command-line plumbing shared by the nv-ipam-tool subcommands */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/tool/cli.h"

int cli_fail(const struct cni_err *err)
{
	bool refused = err->errnum == -EACCES || err->errnum == -EPERM;

	fprintf(stderr, "nv-ipam-tool: %s%s\n", err->msg[0] ? err->msg : "failed",
		refused && geteuid() != 0 ? " (not root: run it as root, the store and the node's "
					    "pool file are root's)" : "");
	return CLI_EXIT_FAIL;
}

void cli_log_sink(void *ctx, enum log_level level, const char *file, int line, const char *msg)
{
	static const char *const names[] = {
		[LOG_LEVEL_ERROR] = "error",
		[LOG_LEVEL_WARNING] = "warning",
		[LOG_LEVEL_INFO] = "info",
	};
	char esc[4096];

	(void)ctx;
	(void)file;
	(void)line;
	/* As the plugins' default threshold: debug is for a plugin's logFile. */
	if (level == LOG_LEVEL_DEBUG)
		return;
	text_escape(msg, strlen(msg), esc, sizeof(esc));
	fprintf(stderr, "nv-ipam-tool: %s: %s\n", names[level], esc);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nv-ipam-tool %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'nv-ipam-tool %s --help'.\n", cmd);
	return CLI_EXIT_USAGE;
}

int cli_parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int cli_parse_listed_at(const char *cmd, const char *arg, unsigned long *ret)
{
	/* 9999-12-31T23:59:59Z, the last time the store can write. */
	if (cli_parse_uint(arg, 253402300799ul, ret) < 0)
		return cli_usage_error(cmd, "invalid --listed-at \"%s\": seconds since the epoch "
				       "(date +%%s)", arg);
	return 0;
}

int cli_options(const char *cmd, const char *help, int argc, char **argv,
		const struct option *opts, int (*handle)(int opt, const char *arg, void *ctx),
		void *ctx, struct cli_node_files *files)
{
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, stdout);
			return 0;
		}
		if (c == '?')
			return -cli_usage_error(cmd, "invalid option");
		if (files && c == 's') {
			files->store = optarg;
		} else if (files && c == 'f') {
			files->pool_file = optarg;
			files->pool_file_given = true;
		} else if (files && c == 't') {
			if (cli_parse_uint(optarg, 3600000, &files->lock_timeout_ms) < 0)
				return -cli_usage_error(cmd, "invalid --lock-timeout-ms \"%s\"", optarg);
		} else {
			r = handle ? handle(c, optarg, ctx) : cli_usage_error(cmd, "invalid option");
			if (r)
				return -r;
		}
	}
	if (optind < argc)
		return -cli_usage_error(cmd, "unexpected argument \"%s\"", argv[optind]);
	return 1;
}

int cli_store_open(const struct cli_node_files *files, bool read_only, struct nvipam_store **ret,
		   struct cni_err *err)
{
	bool there;
	int r = cli_store_exists(files->store, &there, err);

	if (r < 0)
		return r;
	/* Looking must not create the store's directory or lock file. */
	if (!there) {
		*ret = NULL;
		return 0;
	}
	return read_only ? nvipam_store_open_read(files->store, (unsigned int)files->lock_timeout_ms, ret, err) :
			   nvipam_store_open_inspect(files->store, (unsigned int)files->lock_timeout_ms, ret, err);
}

int cli_store_exists(const char *store, bool *ret, struct cni_err *err)
{
	_cleanup_free_ char *pool_dir = NULL;
	struct stat sb;

	if (asprintf(&pool_dir, "%s.d", store) < 0) {
		pool_dir = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	/* Anything but "not there" (a directory that cannot be searched) is for the open to say. */
	*ret = !(stat(store, &sb) < 0 && errno == ENOENT && stat(pool_dir, &sb) < 0 &&
		 errno == ENOENT);
	return 0;
}
