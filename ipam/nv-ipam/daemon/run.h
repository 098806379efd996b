/* The daemons' run: signals blocked for every thread, worker threads, the wait for a stop */
#pragma once

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct serve_reply;

struct daemon_thread {
	pthread_t thread;
	bool started;
};

/**
 * daemon_setup() - logging (klog's, the util logger's lines too), the fd limit, and SIGTERM
 *                  and SIGINT blocked
 * @logging_format: "json" or "text" (--logging-format)
 * @v: --v
 * @ret_sigs: the stop signals, for daemon_wait()
 *
 * Called before any thread starts: every thread inherits the mask, so the signals reach
 * only the main thread's wait. SIGPIPE is ignored (a client gone mid-answer).
 */
void daemon_setup(const char *logging_format, int v, sigset_t *ret_sigs);

/**
 * daemon_thread_start() - start one worker
 * @t: its slot (started set on success)
 * @fn: the thread's function
 * @arg: its argument
 *
 * Return: 0, or -errno.
 */
int daemon_thread_start(struct daemon_thread *t, void *(*fn)(void *), void *arg);

/**
 * daemon_threads_stop() - tell every worker to stop, and join them within a budget
 * @t: the slots
 * @n: how many
 * @stop_fd: the eventfd that every worker's waits watch
 * @budget_ms: how long they all get, together
 *
 * Return: false when a thread did not end in time (it is left running, its slot started).
 */
bool daemon_threads_stop(struct daemon_thread *t, size_t n, int stop_fd, long budget_ms);

/**
 * daemon_wait() - wait for SIGTERM or SIGINT, calling @tick between
 * @sigs: from daemon_setup()
 * @tick_s: how often @tick runs
 * @tick: what the main thread does meanwhile (NULL: nothing)
 * @ctx: its argument
 *
 * Logs "stopping" with the signal.
 */
void daemon_wait(const sigset_t *sigs, long tick_s, void (*tick)(void *ctx), void *ctx);

/**
 * daemon_healthz() - /healthz: "ok" while the process answers at all
 * @ctx: unused
 * @r: the reply (an empty body when out of memory)
 */
void daemon_healthz(void *ctx, struct serve_reply *r);
