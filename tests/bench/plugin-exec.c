/* Benchmark harness: exec a CNI plugin as a runtime does, config on stdin, output captured */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/plugin-exec.h"

int64_t plugin_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

static void close_fds(int *fds, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		close_fd(&fds[i]);
}

/*
 * fds: [0,1] stdin pipe, [2,3] stdout, [4,5] stderr, [6,7] unused.
 * All are O_CLOEXEC so only the dup2'd copies survive execve.
 *
 * posix_spawn, as glibc implements it, is clone(CLONE_VM|CLONE_VFORK) + execve:
 * the way Go runtimes (containerd, CRI-O and Multus through libcni, os/exec)
 * start a plugin, and it keeps the harness's own size out of the figures.
 */
static int spawn(const char *path, char **env, const int *fds, pid_t *ret_pid)
{
	char *argv[] = { (char *)path, NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t def;
	int err;

	if (posix_spawn_file_actions_init(&fa))
		return ENOMEM;
	if (posix_spawnattr_init(&attr)) {
		posix_spawn_file_actions_destroy(&fa);
		return ENOMEM;
	}
	/* The parent ignores SIGPIPE, and an ignored signal stays ignored across exec. */
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	err = posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, fds[3], 1);
	if (!err)
		err = posix_spawn_file_actions_adddup2(&fa, fds[5], 2);
	if (!err)
		err = posix_spawnattr_setsigdefault(&attr, &def);
	if (!err)
		err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	if (!err)
		err = posix_spawn(ret_pid, path, &fa, &attr, argv, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return err;
}

static void capture(int *fd, char *buf, size_t *len, bool *trunc)
{
	char scratch[4096];
	ssize_t n;

	if (*len < CAPTURE_MAX)
		n = read(*fd, buf + *len, CAPTURE_MAX - *len);
	else
		n = read(*fd, scratch, sizeof(scratch));
	if (n < 0 && errno == EINTR)
		return;
	if (n <= 0) {
		close_fd(fd);
		return;
	}
	if (*len < CAPTURE_MAX)
		*len += (size_t)n;
	else
		*trunc = true;
}

/* Feed @input to the child's stdin while draining its stdout and stderr. */
static int pump(int *in_fd, const char *input, size_t in_len, int *out_fd, int *err_fd,
		struct exec_result *result)
{
	size_t off = 0;
	ssize_t n;

	while (*out_fd >= 0 || *err_fd >= 0) {
		struct pollfd p[3] = {
			{ .fd = *in_fd, .events = POLLOUT },
			{ .fd = *out_fd, .events = POLLIN },
			{ .fd = *err_fd, .events = POLLIN },
		};

		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[0].revents) {
			n = write(*in_fd, input + off, in_len - off);
			if (n > 0)
				off += (size_t)n;
			/* EPIPE: the plugin exited without reading all of stdin. */
			if ((n < 0 && errno != EINTR && errno != EAGAIN) || off == in_len)
				close_fd(in_fd);
		}
		if (p[1].revents)
			capture(out_fd, result->out, &result->out_len, &result->out_trunc);
		if (p[2].revents)
			capture(err_fd, result->err, &result->err_len, &result->err_trunc);
	}
	close_fd(in_fd);
	return 0;
}

static int open_pipes(int *fds)
{
	int i;

	for (i = 0; i < 8; i += 2)
		if (pipe2(fds + i, O_CLOEXEC) < 0) {
			int ret = -errno;

			close_fds(fds, (size_t)i);
			return ret;
		}
	/* Non-blocking stdin so a plugin that stops reading cannot stall the pump. */
	if (fcntl(fds[1], F_SETFL, O_NONBLOCK) < 0) {
		int ret = -errno;

		close_fds(fds, 8);
		return ret;
	}
	return 0;
}

static int reap(pid_t pid, struct exec_result *r)
{
	struct rusage ru;

	while (wait4(pid, &r->status, 0, &ru) < 0)
		if (errno != EINTR)
			return -errno;
	r->maxrss_kib = ru.ru_maxrss;
	return 0;
}

int plugin_exec(const char *path, char **env, const char *input, size_t in_len,
		struct exec_result *result)
{
	int fds[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
	int64_t start;
	pid_t pid;
	int ret, reaped;

	result->out_len = result->err_len = 0;
	result->out_trunc = result->err_trunc = false;
	result->exec_errno = 0;
	result->no_result = false;
	ret = open_pipes(fds);
	if (ret)
		return ret;
	start = plugin_now_ns();
	result->exec_errno = spawn(path, env, fds, &pid);
	close_fd(&fds[0]);
	close_fd(&fds[3]);
	close_fd(&fds[5]);
	if (result->exec_errno) {
		close_fds(fds, 8);
		result->ns = plugin_now_ns() - start;
		return 0;
	}
	ret = pump(&fds[1], input, in_len, &fds[2], &fds[4], result);
	if (ret)
		kill(pid, SIGKILL);
	close_fds(fds, 8);
	reaped = reap(pid, result);
	result->ns = plugin_now_ns() - start;
	return ret ? ret : reaped;
}

bool plugin_failed(const struct exec_result *r)
{
	return r->exec_errno || !WIFEXITED(r->status) || WEXITSTATUS(r->status) || r->no_result;
}

bool plugin_has_json(const struct exec_result *r)
{
	size_t i;

	for (i = 0; i < r->out_len; i++)
		if (r->out[i] != ' ' && r->out[i] != '\n' && r->out[i] != '\t' && r->out[i] != '\r')
			return r->out[i] == '{';
	return false;
}

void plugin_describe_failure(const struct exec_result *r, char *buf, size_t len)
{
	if (r->exec_errno)
		snprintf(buf, len, "could not be executed: %s", strerror(r->exec_errno));
	else if (r->no_result)
		snprintf(buf, len, "exited with status 0 but printed no JSON result");
	else if (WIFSIGNALED(r->status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(r->status));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(r->status));
}
