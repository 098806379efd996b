/* The daemons' run: signals blocked for every thread, worker threads, the wait for a stop */
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util/log.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/daemon/limits.h"
#include "ipam/nv-ipam/daemon/run.h"
#include "ipam/nv-ipam/serve/http.h"

void daemon_setup(const char *logging_format, int v, sigset_t *ret_sigs)
{
	klog_setup(strcmp(logging_format, "json") == 0 ? KLOG_JSON : KLOG_TEXT, v, -1);
	/* One log per program: the store's lines too, in the daemon's format, not a plugin's. */
	log_set_sink(klog_sink, NULL);
	(void)daemon_raise_nofile();
	sigemptyset(ret_sigs);
	sigaddset(ret_sigs, SIGTERM);
	sigaddset(ret_sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, ret_sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int daemon_thread_start(struct daemon_thread *t, void *(*fn)(void *), void *arg)
{
	int r = pthread_create(&t->thread, NULL, fn, arg);

	if (r != 0)
		return -r;
	t->started = true;
	return 0;
}

bool daemon_threads_stop(struct daemon_thread *t, size_t n, int stop_fd, long budget_ms)
{
	struct timespec deadline;
	bool all = true;

	(void)!write(stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t));
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += (budget_ms % 1000) * 1000000L;
	deadline.tv_sec += budget_ms / 1000 + deadline.tv_nsec / 1000000000L;
	deadline.tv_nsec %= 1000000000L;
	for (size_t i = 0; i < n; i++) {
		if (!t[i].started)
			continue;
		if (pthread_timedjoin_np(t[i].thread, NULL, &deadline) != 0) {
			all = false;
			continue;
		}
		t[i].started = false;
	}
	return all;
}

void daemon_wait(const sigset_t *sigs, long tick_s, void (*tick)(void *ctx), void *ctx)
{
	int sig;

	for (;;) {
		struct timespec ts = { .tv_sec = tick_s };

		sig = sigtimedwait(sigs, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (tick)
			tick(ctx);
	}
	klog_info(0, "stopping", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT", NULL);
}

void daemon_healthz(void *ctx, struct serve_reply *r)
{
	(void)ctx;
	r->body = strdup("ok");
	r->len = r->body ? 2 : 0;
}
