/* IPAM delegation: run ipam.type from CNI_PATH with the same stdin */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cni/conf.h"
#include "common/cni/ctx.h"
#include "common/cni/ipam-internal.h"
#include "common/cni/ipam.h"
#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "common/util/log.h"

extern char **environ;

/* An IPAM answer is a result or an error; anything larger is a broken plugin. */
#define IPAM_MAX_OUTPUT (1u << 20)
#define ETXTBSY_RETRIES 5

int cni_ipam_find(const char *type, const char *path, char **ret, struct cni_err *err)
{
	const char *p = path;

	if (!cni_conf_ipam_type_valid(type))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid ipam type \"%.64s\": must be a plugin name without '/'",
				   type ? type : "");
	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct stat st;
		char *full;

		if (len && asprintf(&full, "%.*s/%s", (int)len, p, type) >= 0) {
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
				*ret = full;
				return 0;
			}
			free(full);
		}
		p = end ? end + 1 : NULL;
	}
	return cni_err_set(err, CNI_ERR_IPAM, -ENOENT, "failed to find plugin \"%s\" in path [%s]", type,
			   path);
}

/* The child's environment: ours with CNI_COMMAND replaced. */
static char **build_env(const char *command)
{
	size_t n = 0, j = 0;
	char **envp;

	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "CNI_COMMAND=", 12) != 0)
			envp[j++] = environ[i];
	if (asprintf(&envp[j], "CNI_COMMAND=%s", command) < 0) {
		free(envp);
		return NULL;
	}
	return envp;
}

static void free_env(char **envp)
{
	size_t n = 0;

	if (!envp)
		return;
	while (envp[n])
		n++;
	/* Only the last entry, CNI_COMMAND, was allocated here. */
	if (n)
		free(envp[n - 1]);
	free(envp);
}

DEFINE_CLEANUP_FUNC(free_envp, char **, free_env);

struct child_io {
	char *out;
	size_t out_len;
	int status;
	int exec_errno;
	bool started; /* the child ran: it may have done something an ADD must undo */
};

/*
 * Feeds stdin and drains stdout together so neither side can block the other.
 * A descriptor is closed (and set to -1) when its side is done; on failure
 * what is left open stays so, for the caller to stop the child first: closed
 * pipes would let it run on and finish what it was cut short doing.
 */
static int pump(int *in_fdp, const char *in, size_t in_len, int *out_fdp, struct child_io *io)
{
	int in_fd = *in_fdp, out_fd = *out_fdp;
	size_t sent = 0, cap = 0;
	struct pollfd fds[2];
	int r = 0;

	while (r == 0 && (in_fd >= 0 || out_fd >= 0)) {
		int nfds = 0;

		if (out_fd >= 0)
			fds[nfds++] = (struct pollfd){ .fd = out_fd, .events = POLLIN };
		if (in_fd >= 0)
			fds[nfds++] = (struct pollfd){ .fd = in_fd, .events = POLLOUT };
		if (poll(fds, (nfds_t)nfds, -1) < 0) {
			if (errno != EINTR)
				r = -errno;
			continue;
		}
		for (int i = 0; i < nfds; i++) {
			if (fds[i].fd == in_fd && (fds[i].revents & (POLLOUT | POLLERR | POLLHUP))) {
				ssize_t w = write(in_fd, in + sent, in_len - sent);

				if (w > 0)
					sent += (size_t)w;
				/* A plugin may exit without reading its stdin. */
				if (w < 0 || sent == in_len) {
					close(in_fd);
					in_fd = -1;
				}
			} else if (fds[i].fd == out_fd && fds[i].revents) {
				ssize_t rd;

				if (cap - io->out_len < 4096) {
					char *nb;

					cap = cap ? cap * 2 : 8192;
					if (cap > IPAM_MAX_OUTPUT + 8192) {
						r = -EFBIG;
						break;
					}
					nb = realloc(io->out, cap);
					if (!nb) {
						r = -ENOMEM;
						break;
					}
					io->out = nb;
				}
				rd = read(out_fd, io->out + io->out_len, cap - io->out_len - 1);
				if (rd < 0 && errno == EINTR)
					continue;
				if (rd <= 0) {
					close(out_fd);
					out_fd = -1;
				} else {
					io->out_len += (size_t)rd;
					io->out[io->out_len] = '\0';
				}
			}
		}
	}
	*in_fdp = in_fd;
	*out_fdp = out_fd;
	return r;
}

static int run_once(const char *bin, char **envp, const char *in, size_t in_len, struct child_io *io)
{
	int in_pipe[2], out_pipe[2], err_pipe[2];
	pid_t pid, parent;
	int r = 0, e = 0;
	ssize_t n;

	if (pipe2(in_pipe, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out_pipe, O_CLOEXEC) < 0) {
		r = -errno;
		goto close_in;
	}
	if (pipe2(err_pipe, O_CLOEXEC) < 0) {
		r = -errno;
		goto close_out;
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto close_err;
	}
	if (pid == 0) {
		char *argv[] = { (char *)bin, NULL };

		/*
		 * A plugin killed (a runtime's timeout) takes its IPAM plugin with it: an
		 * orphan could commit an allocation after the DEL that followed released
		 * nothing. The check covers a parent that died before the prctl.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		if (dup2(in_pipe[0], STDIN_FILENO) < 0 || dup2(out_pipe[1], STDOUT_FILENO) < 0)
			_exit(127);
		execve(bin, argv, envp);
		e = errno;
		(void)!write(err_pipe[1], &e, sizeof(e));
		_exit(127);
	}
	io->started = true;
	close(in_pipe[0]);
	close(out_pipe[1]);
	close(err_pipe[1]);
	/* A closed pipe would otherwise kill us while feeding a plugin that exited early. */
	signal(SIGPIPE, SIG_IGN);
	r = pump(&in_pipe[1], in, in_len, &out_pipe[0], io);
	/* A plugin that says too much is not waited for: it could block on a full pipe forever. */
	if (r < 0)
		(void)kill(pid, SIGKILL);
	if (in_pipe[1] >= 0)
		close(in_pipe[1]);
	if (out_pipe[0] >= 0)
		close(out_pipe[0]);
	n = read(err_pipe[0], &e, sizeof(e));
	io->exec_errno = n == (ssize_t)sizeof(e) ? e : 0;
	close(err_pipe[0]);
	while (waitpid(pid, &io->status, 0) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return r;

close_err:
	close(err_pipe[0]);
	close(err_pipe[1]);
close_out:
	close(out_pipe[0]);
	close(out_pipe[1]);
close_in:
	close(in_pipe[0]);
	close(in_pipe[1]);
	return r;
}

static int pass_error(const char *type, const struct child_io *io, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *o = NULL;
	struct cni_err ignored = { 0 };
	const char *msg = NULL, *details = NULL;
	int64_t code = 0;
	int status = WIFEXITED(io->status) ? WEXITSTATUS(io->status) : 128 + WTERMSIG(io->status);

	if (io->out_len && cjson_parse(io->out, io->out_len, "error", &o, &ignored) == 0 &&
	    cjson_get_int(o, "code", 1, INT32_MAX, &code, &ignored) == 1) {
		(void)cjson_get_str(o, "msg", &msg, &ignored);
		(void)cjson_get_str(o, "details", &details, &ignored);
		cni_err_set(err, (int)code, -EIO, "%s", msg ? msg : "");
		if (details)
			cni_err_details(err, "%s", details);
		return -EIO;
	}
	cni_err_set(err, CNI_ERR_IPAM, -EIO, "IPAM plugin \"%s\" failed with exit status %d", type,
		    status);
	cni_err_details(err, "output: %.1900s", io->out_len ? io->out : "(none)");
	return -EIO;
}

void cni_ipam_undo(const struct cni_ctx *ctx)
{
	struct cni_err ignored = { 0 };

	if (cni_ipam_run(ctx, CNI_CMD_DEL, NULL, &ignored) < 0)
		log_error("undo: IPAM DEL failed: %s", ignored.msg);
}

int cni_ipam_run(const struct cni_ctx *ctx, enum cni_command cmd, struct cni_result *ret,
		 struct cni_err *err)
{
	const struct cni_conf *conf = &ctx->conf;
	_cleanup_free_ char *bin = NULL;
	_cleanup_(free_envp) char **envp = NULL;
	struct child_io io = { 0 };
	int r;

	if (!cni_conf_has_ipam(conf))
		return 0;
	r = cni_ipam_find(conf->ipam_type, ctx->env.path, &bin, err);
	if (r < 0)
		return r;
	envp = build_env(cni_command_name(cmd));
	if (!envp)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	log_debug("running IPAM %s %s", bin, cni_command_name(cmd));
	for (int attempt = 0;; attempt++) {
		free(io.out);
		io = (struct child_io){ 0 };
		r = run_once(bin, envp, conf->raw, conf->raw_len, &io);
		/* A freshly installed plugin can still be open for writing. */
		if (r < 0 || io.exec_errno != ETXTBSY || attempt == ETXTBSY_RETRIES)
			break;
		sleep(1);
	}
	if (r < 0) {
		free(io.out);
		if (r == -EFBIG)
			cni_err_set(err, CNI_ERR_IPAM, r,
				    "IPAM plugin \"%s\" printed more than %u bytes; it was stopped",
				    conf->ipam_type, IPAM_MAX_OUTPUT);
		else
			cni_err_set(err, CNI_ERR_IPAM, r, "failed to run IPAM plugin \"%s\": %s", bin,
				    strerror(-r));
		/* It ran: whatever it reserved before it was stopped is released. */
		if (io.started && cmd == CNI_CMD_ADD)
			cni_ipam_undo(ctx);
		return r;
	}
	if (io.exec_errno) {
		free(io.out);
		return cni_err_set(err, CNI_ERR_IPAM, -io.exec_errno, "failed to exec IPAM plugin \"%s\": %s",
				   bin, strerror(io.exec_errno));
	}
	if (!WIFEXITED(io.status) || WEXITSTATUS(io.status) != 0) {
		r = pass_error(conf->ipam_type, &io, err);
		free(io.out);
		return r;
	}
	if (cmd == CNI_CMD_ADD && ret) {
		struct cni_err perr = { 0 };

		r = cni_result_parse(io.out ? io.out : "", io.out_len, conf->cni_version, ret, &perr);
		if (r < 0) {
			cni_err_set(err, CNI_ERR_IPAM, r, "IPAM plugin \"%s\" returned an unusable result: %s",
				    conf->ipam_type, perr.msg);
			cni_err_details(err, "%s", perr.details);
		}
	}
	free(io.out);
	/* It succeeded, so it reserved what it could not describe: give that back. */
	if (r < 0 && cmd == CNI_CMD_ADD)
		cni_ipam_undo(ctx);
	return r;
}
