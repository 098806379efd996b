/* iptables: the host's own iptables and ip6tables, run as upstream's plugins run them */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/netfilter/iptables.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"

extern char **environ;

/* What execvp would search without a PATH, and what a runtime started by systemd has. */
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* What is kept of the binary's complaint for the error. */
#define STDERR_MAX 1024

static const char *binary(enum ipt_family f)
{
	return f == IPT_IPV6 ? "ip6tables" : "iptables";
}

int ipt_argv(enum ipt_family f, const char *table, const char *op, const char *chain,
	     const char *const *extra, size_t n, const char ***ret)
{
	const char **v = calloc(n + 7, sizeof(*v));
	size_t i = 0;

	if (!v)
		return -ENOMEM;
	v[i++] = binary(f);
	v[i++] = "-t";
	v[i++] = table;
	v[i++] = op;
	if (chain)
		v[i++] = chain;
	for (size_t k = 0; k < n; k++)
		v[i++] = extra[k];
	/* Appended last, as go-iptables does: wait for the xtables lock, never fail on it. */
	v[i++] = "--wait";
	v[i] = NULL;
	*ret = v;
	return 0;
}

/* The binary's path: the first executable of that name in PATH. */
static int find_binary(const char *name, char *buf, size_t size)
{
	const char *path = getenv("PATH");

	if (!path || !*path)
		path = DEFAULT_PATH;
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");
		struct stat st;

		if (len > 0 && (size_t)snprintf(buf, size, "%.*s/%s", (int)len, p, name) < size &&
		    stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 0;
		p += len;
		p += *p == ':';
	}
	return -ENOEXEC;
}

/* Appends what @fd has to @buf up to @max bytes (the rest is read and dropped); 0 at its end. */
static int drain(int fd, char **buf, size_t *len, size_t max)
{
	char chunk[65536];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : -errno;
	if (n == 0)
		return 0;
	if (buf && *len < max) {
		size_t take = (size_t)n < max - *len ? (size_t)n : max - *len;
		char *nb = realloc(*buf, *len + take + 1);

		if (!nb)
			return -ENOMEM;
		memcpy(nb + *len, chunk, take);
		*len += take;
		nb[*len] = '\0';
		*buf = nb;
	}
	return 1;
}

/* The command line as one string, for the error. */
static void command_text(const char *const *argv, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; argv[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", argv[i]);
}

/*
 * Runs the binary with stdout and stderr read as they come (a listing larger than a
 * pipe would otherwise stall it), the signal mask and dispositions reset (a plugin
 * may be blocking termination signals around a move).
 */
static int spawn(const char *path, const char *const *argv, const char *in, char **out,
		 size_t *out_len, char **errtext, size_t *err_len, int *ret_status)
{
	_cleanup_close_ int out_r = -1, err_r = -1, in_r = -1, in_w = -1;
	int out_p[2] = { -1, -1 }, err_p[2] = { -1, -1 }, r = 0, status;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	pid_t pid;

	if (pipe2(out_p, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err_p, O_CLOEXEC) < 0) {
		r = -errno;
		close(out_p[0]);
		close(out_p[1]);
		return r;
	}
	out_r = out_p[0];
	err_r = err_p[0];
	if (in) {
		int in_p[2];

		if (pipe2(in_p, O_CLOEXEC) < 0) {
			r = -errno;
			close(out_p[1]);
			close(err_p[1]);
			return r;
		}
		in_r = in_p[0];
		in_w = in_p[1];
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	if (in)
		posix_spawn_file_actions_adddup2(&fa, in_r, 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_p[1], 2);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = -posix_spawn(&pid, path, &fa, &attr, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(out_p[1]);
	close(err_p[1]);
	if (r < 0)
		return r;
	/*
	 * The input fits the pipe (ipt_restore() bounds it): written whole before reading,
	 * with our read end still open so that a child gone early is no SIGPIPE.
	 */
	if (in) {
		for (size_t done = 0, len = strlen(in); done < len && r == 0;) {
			ssize_t n = write(in_w, in + done, len - done);

			if (n < 0 && errno != EINTR)
				r = -errno;
			else if (n > 0)
				done += (size_t)n;
		}
		closep(&in_w);
		in_w = -1;
		closep(&in_r);
		in_r = -1;
	}
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd p[2] = { { .fd = out_r, .events = POLLIN },
				       { .fd = err_r, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		for (int i = 0; i < 2; i++) {
			int *fd = i ? &err_r : &out_r;
			int d;

			if (*fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			d = i ? drain(*fd, errtext, err_len, STDERR_MAX)
			      : drain(*fd, out, out_len, IPT_OUTPUT_MAX);
			if (d <= 0) {
				if (d < 0 && r == 0)
					r = d;
				close(*fd);
				*fd = -1;
				open_fds--;
			}
		}
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (r < 0)
		return r;
	*ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

/*
 * Runs a command line: 0 with its exit status and what it printed, or the negative errno
 * of a binary that could not be run (@err filled).
 */
static int exec_cmd(const char *const *argv, const char *in, char **ret_out, int *ret_status,
		    char **ret_errtext, struct cni_err *err)
{
	_cleanup_free_ char *out = NULL;
	size_t out_len = 0, err_len = 0;
	char path[4096];
	int r;

	r = find_binary(argv[0], path, sizeof(path));
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "%s: not found in PATH", argv[0]);
	*ret_errtext = NULL;
	r = spawn(path, argv, in, ret_out ? &out : NULL, &out_len, ret_errtext, &err_len, ret_status);
	if (r == -ENOENT || r == -EACCES || r == -ENOEXEC)
		return cni_err_set(err, CNI_ERR_KERNEL, -ENOEXEC, "cannot run %s: %s", path,
				   strerror(-r));
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "running %s: %s", argv[0], strerror(-r));
	if (ret_out && *ret_status == 0) {
		if (!out && !(out = strdup("")))
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		*ret_out = TAKE_PTR(out);
	}
	return 0;
}

/* go-iptables' IsNotExist(): the two complaints of a missing rule or chain. */
static bool not_exist(const char *errtext)
{
	return errtext && (strstr(errtext, "Bad rule (does a matching rule exist in that chain?)") ||
			   strstr(errtext, "No chain/target/match by that name"));
}

static int failed(const char *const *argv, int status, char *errtext, struct cni_err *err)
{
	char cmd[512];

	command_text(argv, cmd, sizeof(cmd));
	if (errtext)
		errtext[strcspn(errtext, "\n")] = '\0';
	return cni_err_set(err, CNI_ERR_KERNEL, -EIO, "running %s: exit status %d: %s", cmd, status,
			   errtext ? errtext : "");
}

int ipt_run(const char *const *argv, char **ret_out, struct cni_err *err)
{
	_cleanup_free_ char *errtext = NULL;
	int status, r;

	r = exec_cmd(argv, NULL, ret_out, &status, &errtext, err);
	if (r < 0 || status == 0)
		return r;
	if (status == 1 && not_exist(errtext))
		return -ENOENT;
	return failed(argv, status, errtext, err);
}

/*
 * One operation: its command line built and run. The exit status is returned (0 and up)
 * for callers that read it as upstream does; @err is filled only when it cannot be run.
 */
static int op(enum ipt_family f, const char *table, const char *o, const char *chain,
	      const char *const *extra, size_t n, char **ret_out, char **ret_errtext,
	      const char ***ret_argv, struct cni_err *err)
{
	int r = ipt_argv(f, table, o, chain, extra, n, ret_argv), status;

	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	r = exec_cmd(*ret_argv, NULL, ret_out, &status, ret_errtext, err);
	return r < 0 ? r : status;
}

/* Runs an operation; @ok1 says whether exit status 1 counts as done (returned as 1). */
static int op_status(enum ipt_family f, const char *table, const char *o, const char *chain,
		     const char *const *extra, size_t n, bool ok1, bool ok_missing, struct cni_err *err)
{
	_cleanup_free_ const char **argv = NULL;
	_cleanup_free_ char *errtext = NULL;
	int r = op(f, table, o, chain, extra, n, NULL, &errtext, &argv, err);

	if (r <= 0)
		return r;
	if (r == 1 && ok1)
		return 1;
	if (ok_missing && r == 1 && not_exist(errtext))
		return -ENOENT;
	return failed(argv, r, errtext, err);
}

int ipt_chain_exists(enum ipt_family f, const char *table, const char *chain, struct cni_err *err)
{
	static const char *const first[] = { "1" };
	/* As go-iptables' ChainExists(): exit status 1 is no such chain, whatever it says. */
	int r = op_status(f, table, "-S", chain, first, 1, true, false, err);

	return r < 0 ? r : r == 0;
}

int ipt_chain_ensure(enum ipt_family f, const char *table, const char *chain, struct cni_err *err)
{
	/* Exit status 1 of -N: it exists (upstream's EnsureChain). */
	int r = op_status(f, table, "-N", chain, NULL, 0, true, false, err);

	return r < 0 ? r : 0;
}

int ipt_chain_clear(enum ipt_family f, const char *table, const char *chain, struct cni_err *err)
{
	int r = op_status(f, table, "-N", chain, NULL, 0, true, false, err);

	if (r <= 0)
		return r;
	r = op_status(f, table, "-F", chain, NULL, 0, false, false, err);
	return r < 0 ? r : 0;
}

int ipt_chain_delete(enum ipt_family f, const char *table, const char *chain, struct cni_err *err)
{
	int r = op_status(f, table, "-F", chain, NULL, 0, false, true, err);

	if (r == 0)
		r = op_status(f, table, "-X", chain, NULL, 0, false, true, err);
	return r == -ENOENT ? 0 : r;
}

int ipt_rule_exists(enum ipt_family f, const char *table, const char *chain,
		    const char *const *rule, size_t n, struct cni_err *err)
{
	/* As go-iptables' Exists(): exit status 1 is no such rule. */
	int r = op_status(f, table, "-C", chain, rule, n, true, false, err);

	return r < 0 ? r : r == 0;
}

int ipt_rule_ensure(enum ipt_family f, const char *table, const char *chain, bool first,
		    const char *const *rule, size_t n, struct cni_err *err)
{
	_cleanup_free_ const char **at = NULL;
	int r = ipt_rule_exists(f, table, chain, rule, n, err);

	if (r != 0)
		return r < 0 ? r : 0;
	if (!first)
		return op_status(f, table, "-A", chain, rule, n, false, false, err);
	at = calloc(n + 1, sizeof(*at));
	if (!at)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	at[0] = "1";
	memcpy(at + 1, rule, n * sizeof(*at));
	return op_status(f, table, "-I", chain, at, n + 1, false, false, err);
}

int ipt_rule_delete(enum ipt_family f, const char *table, const char *chain,
		    const char *const *rule, size_t n, struct cni_err *err)
{
	_cleanup_free_ const char **argv = NULL;
	_cleanup_free_ char *errtext = NULL;
	int r = op(f, table, "-D", chain, rule, n, NULL, &errtext, &argv, err);

	/* As upstream's DeleteRule(): a missing rule or chain, or exit status 2, is done. */
	if (r <= 0 || (r == 1 && not_exist(errtext)) || r == 2)
		return r < 0 ? r : 0;
	return failed(argv, r, errtext, err);
}

int ipt_list(enum ipt_family f, const char *table, const char *chain, char **ret_out,
	     struct cni_err *err)
{
	_cleanup_free_ const char **argv = NULL;
	_cleanup_free_ char *errtext = NULL;
	int r = op(f, table, "-S", chain, NULL, 0, ret_out, &errtext, &argv, err);

	if (r <= 0)
		return r;
	/* The nf_tables backend calls a missing chain "incompatible", with exit status 1. */
	if (r == 1 && chain)
		return -ENOENT;
	return failed(argv, r, errtext, err);
}

int ipt_restore(enum ipt_family f, const char *text, struct cni_err *err)
{
	const char *const argv[] = { f == IPT_IPV6 ? "ip6tables-restore" : "iptables-restore",
				     "--noflush", "--wait", NULL };
	_cleanup_free_ char *errtext = NULL;
	int status, r;

	if (strlen(text) > IPT_RESTORE_MAX)
		return cni_err_set(err, CNI_ERR_INTERNAL, -E2BIG, "%s: input too large", argv[0]);
	r = exec_cmd(argv, text, NULL, &status, &errtext, err);
	if (r < 0 || status == 0)
		return r;
	return failed(argv, status, errtext, err);
}
