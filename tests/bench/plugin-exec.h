/* Benchmark harness: exec a CNI plugin as a runtime does, config on stdin, output captured */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CAPTURE_MAX (64 * 1024)

/* What one exec of a plugin produced. */
struct exec_result {
	int status;		/* wait status */
	int exec_errno;		/* non-zero: execve itself failed */
	bool no_result;		/* ADD exited 0 but printed no JSON object */
	long maxrss_kib;
	int64_t ns;
	size_t out_len, err_len;
	bool out_trunc, err_trunc;
	char out[CAPTURE_MAX];
	char err[CAPTURE_MAX];
};

/**
 * plugin_now_ns() - CLOCK_MONOTONIC in nanoseconds
 *
 * Return: the time.
 */
int64_t plugin_now_ns(void);

/**
 * plugin_exec() - run one plugin invocation (vfork-style posix_spawn + execve, as Go
 *                 runtimes start plugins), feeding @input on stdin and capturing its output
 * @path: plugin binary
 * @env: its whole environment
 * @input: stdin
 * @in_len: its length
 * @result: what it did, its time included
 *
 * A plugin that fails is no error here: see plugin_failed().
 *
 * Return: 0, or negative errno on a harness error.
 */
int plugin_exec(const char *path, char **env, const char *input, size_t in_len,
		struct exec_result *result);

/**
 * plugin_failed() - whether a run failed: not executed, killed, a non-zero status, or
 *                   (->no_result) an ADD without a result
 * @r: the run
 *
 * Return: true when it failed.
 */
bool plugin_failed(const struct exec_result *r);

/**
 * plugin_has_json() - whether stdout starts with a JSON object: a runtime fails an ADD
 *                     whose stdout does not parse as a result; a cheap stand-in for that
 * @r: the run
 *
 * Return: true when it does.
 */
bool plugin_has_json(const struct exec_result *r);

/**
 * plugin_describe_failure() - why a run failed, in words
 * @r: the run
 * @buf: output
 * @len: its size
 */
void plugin_describe_failure(const struct exec_result *r, char *buf, size_t len);
