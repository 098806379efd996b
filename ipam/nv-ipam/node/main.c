/*
 * ipam-node: nv-ipam's node program, run by the Network Operator's nv-ipam-node DaemonSet
 *
 * At start, in order (any failure ends it with status 1, as the reference's does): what
 * can fail without touching the node, checked first so that a failed start changes
 * nothing (the flags, the install source, the directories, the kubeconfig, the probe and
 * metrics servers bound, one answer of the API server); the owner lock, then the store
 * lock; the store adopted (taken back after a handover, or migrated from the reference
 * daemon's); nv-ipam and nv-ipam-tool installed into --cni-bin-dir (not over a store of a
 * format this build cannot read: that is logged, and the rest runs);
 * nv-ipam.conf written. Then three threads work until SIGTERM or SIGINT: one reflector per
 * pool kind (each change rewrites the node pool file), and the cleaner. The main thread
 * waits for the signal (and retries a pool file sync that failed), tells every thread to
 * stop through one eventfd that all their waits watch, hands the store over in the
 * reference daemon's format (so that going back to it keeps every address) and exits, 1
 * when that could not be done. The handover runs whether or not every thread ended, and
 * only while the owner lock is ours. Every file is replaced by rename and the store by its
 * own crash-safe commits: a stop at any instant leaves
 * nothing half-written.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/conn.h"
#include "ipam/nv-ipam/api/reflector.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/daemon/run.h"
#include "ipam/nv-ipam/node/conf.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/install.h"
#include "ipam/nv-ipam/node/metrics.h"
#include "ipam/nv-ipam/node/node.h"
#include "ipam/nv-ipam/serve/http.h"
#include "ipam/nv-ipam/store/store.h"

/*
 * The Network Operator gives the pod 10 s (terminationGracePeriodSeconds) from SIGTERM to
 * SIGKILL: the threads get most of it, the handover's wait for the node lock the rest,
 * and its render and writes fit in what is left.
 */
#define STOP_THREADS_MS 6500L
#define HANDOVER_LOCK_WAIT_MS 2500L
/* From the signal to the end of the node lock's wait; the render and writes fit in 1 s. */
#define STOP_BUDGET_MS (STOP_THREADS_MS + HANDOVER_LOCK_WAIT_MS)

/*
 * How long the owner lock and the store lock are waited for at start: a predecessor
 * ending its handover, not a second ipam-node that runs (this one then exits 1).
 */
#define START_LOCK_WAIT_MS 3000L

/*
 * How long the start tries to reach the API server before it exits 1 (the kubelet then
 * restarts it, backing off): a server that is restarting or a proxy before it answering
 * 5xx. Nothing on the node is touched before it answers.
 */
#define START_API_WAIT_MS 5000L

enum { T_IPPOOLS, T_CIDRPOOLS, T_CLEANER, N_THREADS };

struct worker {
	struct node *n;
	int what;
	struct api_client *client;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	if (w->what == T_CLEANER)
		node_cleaner_run(w->n, w->client);
	else
		api_reflector_run(w->n->refl[w->what], w->client);
	return NULL;
}

static struct node node;

static void readyz(void *ctx, struct serve_reply *r)
{
	struct node *n = ctx;
	bool ready = node_pools_ready(n);

	/* Not ready until the pools are listed and the file written (RBAC refused, say). */
	r->status = ready ? 200 : 500;
	r->body = strdup(ready ? "ok" : "the node pool file is not synced yet: see the log");
	r->len = r->body ? strlen(r->body) : 0;
}

static void metrics(void *ctx, struct serve_reply *r)
{
	struct node *n = ctx;

	if (metrics_render(&n->metrics, &r->body, &r->len) < 0) {
		r->status = 500;
		r->body = NULL;
		return;
	}
	r->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* The probes first, then /metrics: served together or apart. */
static const struct serve_route all_routes[] = {
	{ "/healthz", daemon_healthz, &node },
	{ "/readyz", readyz, &node },
	{ "/metrics", metrics, &node },
};

static void install_log(const char *line)
{
	klog_info(0, "shim CNI binary", "detail", line, NULL);
}

static int check_flags(const struct node_flags *f, FILE *err)
{
	struct stat st;
	char *dir, *slash;
	enum log_level level;
	int r;

	if (!f->node_name || !*f->node_name) {
		fprintf(err, "ipam-node: invalid config: node-name is required parameter\n");
		return -EINVAL;
	}
	if (strcmp(f->logging_format, "text") != 0 && strcmp(f->logging_format, "json") != 0) {
		fprintf(err, "ipam-node: invalid config: logging-format \"%s\": text or json\n",
			f->logging_format);
		return -EINVAL;
	}
	if (log_level_parse(f->cni_log_level, &level) < 0 && strcmp(f->cni_log_level, "panic") != 0) {
		fprintf(err, "ipam-node: invalid config: cni-log-level \"%s\": verbose, debug, info, "
			"warning, error or panic\n", f->cni_log_level);
		return -EINVAL;
	}
	if (!*f->store_file || f->store_file[0] != '/') {
		fprintf(err, "ipam-node: invalid config: store-file must be an absolute path\n");
		return -EINVAL;
	}
	dir = strdup(f->store_file);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	*(slash == dir ? slash + 1 : slash) = '\0';
	r = stat(dir, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (r < 0) {
		fprintf(err, "ipam-node: invalid config: store-file is invalid: %s: %s\n", dir,
			strerror(-r));
		free(dir);
		return -EINVAL;
	}
	free(dir);
	/* Checked again where it is opened; here so that the message comes before any log. */
	if (lstat(f->store_file, &st) == 0 && !S_ISREG(st.st_mode)) {
		fprintf(err, "ipam-node: invalid config: store-file %s is not a regular file\n",
			f->store_file);
		return -EINVAL;
	}
	if (f->stale_check_interval_ms > 0 && f->stale_check_interval_ms < 1000) {
		fprintf(err, "ipam-node: invalid config: stale-ip-check-interval below 1s\n");
		return -EINVAL;
	}
	if (f->stale_check_count > 1000) {
		fprintf(err, "ipam-node: invalid config: stale-ip-check-count-before-release above 1000\n");
		return -EINVAL;
	}
	if (f->released_ip_cooldown_ms > 86400000L) {
		fprintf(err, "ipam-node: invalid config: released-ip-cooldown above 24h\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * Every bind address listened on (the probes' handlers read only what main() set up). A
 * predecessor ending its handover listens until it exits: an address in use is tried
 * again for as long as the owner lock would be waited for.
 * Return: 0, -ECANCELED when stopped meanwhile, -1 after logging the failure.
 */
static int start_servers(const struct node_flags *f, const sigset_t *sigs, struct serve **probes,
			 struct serve **metrics_srv)
{
	int64_t deadline = clock_mono_ms() + START_LOCK_WAIT_MS;
	char hbuf[128], mbuf[128];
	bool said = false;

	for (;;) {
		struct timespec tick = { .tv_nsec = 100 * 1000000L };
		struct cni_err err = { 0 };
		int r;

		if (strcmp(f->metrics_bind_address, f->health_probe_bind_address) == 0) {
			r = serve_start(f->health_probe_bind_address, all_routes, 3, probes, &err);
		} else {
			r = serve_start(f->health_probe_bind_address, all_routes, 2, probes, &err);
			if (r == 0)
				r = serve_start(f->metrics_bind_address, all_routes + 2, 1, metrics_srv, &err);
		}
		if (r == 0)
			break;
		serve_stop(*probes);
		*probes = NULL;
		if (r != -EADDRINUSE || clock_mono_ms() >= deadline) {
			klog_error(err.msg, "unable to start the probe and metrics servers: nothing "
				   "changed on the node", NULL);
			return -1;
		}
		if (!said)
			klog_info(0, "waiting for a bind address", "detail", err.msg, NULL);
		said = true;
		if (sigtimedwait(sigs, NULL, &tick) > 0)
			return -ECANCELED;
	}
	klog_info(0, "serving", "probes",
		  serve_address(f->health_probe_bind_address, *probes, hbuf, sizeof(hbuf)), "metrics",
		  serve_address(f->metrics_bind_address, *metrics_srv ? *metrics_srv : *probes, mbuf,
				sizeof(mbuf)), NULL);
	return 0;
}

/*
 * Whatever can fail without touching the node, checked before anything on it is: the
 * install source, the directories, the kubeconfig, the bind addresses (bound), the API
 * server (one answer). 0, the exit status, or -1 when stopped (status 0).
 */
static int check_start(struct node *n, const sigset_t *sigs, struct serve **probes,
		       struct serve **metrics_srv)
{
	const struct node_flags *f = n->flags;
	struct cni_err err = { 0 };
	int r;

	for (int i = 0; i < f->n_ignored; i++)
		klog_info(0, "flag taken and ignored: nv-ipam has no daemon", "flag", f->ignored[i], NULL);
	if (node_check_install(f, &err) < 0) {
		klog_error(err.msg, "failed at nv-ipam copy: nothing changed on the node", NULL);
		return 1;
	}
	/* The node pool file goes there even without nv-ipam.conf. */
	if (node_check_dir(f->cni_conf_dir, "cni-conf-dir", &err) < 0 ||
	    (!f->cni_skip_binary_copy && node_check_dir(f->cni_bin_dir, "cni-bin-dir", &err) < 0)) {
		klog_error(err.msg, "invalid config: nothing changed on the node", NULL);
		return 1;
	}
	if (api_conn_load(f->kubeconfig, &n->conn, &err) < 0) {
		klog_error(err.msg, "failed to read config for k8s client: nothing changed on the node",
			   NULL);
		return 1;
	}
	klog_info(0, "API server", "server", n->conn.server, "from", n->conn.origin, NULL);
	r = start_servers(f, sigs, probes, metrics_srv);
	if (r == -1)
		return 1;
	if (r == 0)
		metrics_set_servers(&n->metrics, *probes, *metrics_srv);
	if (r == 0)
		r = node_api_reach(n, START_API_WAIT_MS, sigs, &err);
	if (r == -ECANCELED) {
		klog_info(0, "stopped before the start's checks ended: nothing changed on the node", NULL);
		return -1;
	}
	if (r < 0) {
		klog_error(err.msg, "failed to reach the API server: nothing changed on the node", NULL);
		return 1;
	}
	return 0;
}

/* check_start() on a thread of its own: what it found, and whether it ended. */
struct checker {
	struct node *n;
	const sigset_t *sigs;
	struct serve *probes, *metrics_srv;
	int rc;
	bool done; /* atomic */
};

static void *check_thread(void *arg)
{
	struct checker *c = arg;

	c->rc = check_start(c->n, c->sigs, &c->probes, &c->metrics_srv);
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * check_start() with the main thread free to take a stop signal: a check blocked in the
 * kernel (curl's open() of a kubeconfig's CA file that is a FIFO, a hung mount) cannot be
 * woken, but it has changed nothing on the node, so the process ends at SIGTERM all the
 * same, with status 0 as a stop does (the thread may hold what it opened: nothing freed).
 */
static int check_start_stoppable(struct node *n, const sigset_t *sigs, struct serve **probes,
				 struct serve **metrics_srv)
{
	struct checker c = { .n = n, .sigs = sigs };
	pthread_t t;

	if (pthread_create(&t, NULL, check_thread, &c) != 0)
		return check_start(n, sigs, probes, metrics_srv);
	while (!__atomic_load_n(&c.done, __ATOMIC_ACQUIRE)) {
		struct timespec tick = { .tv_nsec = 50 * 1000000L };
		int sig = sigtimedwait(sigs, NULL, &tick);

		if (sig == SIGTERM || sig == SIGINT) {
			klog_info(0, "stopped before the start's checks ended: nothing changed on the node",
				  "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT", NULL);
			fflush(NULL);
			_exit(0);
		}
	}
	pthread_join(t, NULL);
	*probes = c.probes;
	*metrics_srv = c.metrics_srv;
	return c.rc;
}

/* The start-up steps that change the node, before any thread; as check_start(). */
static int prepare(struct node *n, const sigset_t *sigs)
{
	const struct node_flags *f = n->flags;
	_cleanup_free_ char *conf = NULL;
	struct cni_err err = { 0 };
	int r;

	/* Built before the locks: out of memory changes nothing. */
	if (!f->cni_skip_config_creation && node_conf_text(f, n->pool_file, &conf) < 0) {
		klog_error("out of memory", "failed to write configuration for shim CNI", NULL);
		return 1;
	}
	r = node_lock_wait(n, node_owner_lock, START_LOCK_WAIT_MS, sigs, &err);
	if (r == 0)
		r = node_lock_wait(n, node_store_lock, START_LOCK_WAIT_MS, sigs, &err);
	if (r == -ECANCELED) {
		klog_info(0, "stopped before the store was adopted", NULL);
		return -1;
	}
	if (r < 0) {
		klog_error(err.msg, "failed to lock store: this ipam-node does not run", NULL);
		return 1;
	}
	r = node_store_adopt(n);
	if (r)
		return r;
	if (!f->cni_skip_binary_copy && n->store_adopted) {
		r = node_install(f->cni_bin_dir, f->cni_nv_ipam_bin_file, install_log, &err);
		if (r == -ECANCELED) {
			klog_info(0, "stopped before the install", "detail", err.msg, NULL);
			return -1;
		}
		if (r < 0) {
			klog_error(err.msg, "failed at nv-ipam copy", NULL);
			return 1;
		}
	}
	if (!f->cni_skip_config_creation) {
		r = node_conf_write(f->cni_conf_dir, conf, &err);
		if (r < 0) {
			klog_error(err.msg, "failed to write configuration for shim CNI", NULL);
			return 1;
		}
		klog_info(0, r ? "config for shim CNI written" : "config for shim CNI unchanged",
			  "dir", f->cni_conf_dir, "config", conf, NULL);
	}
	return 0;
}

/* Between signals: a pool file sync that failed is tried again. */
static void retry_sync(void *ctx)
{
	struct node *n = ctx;

	if (__atomic_load_n(&n->sync_failed, __ATOMIC_RELAXED))
		node_pools_retry(n);
}

/* What the threads share, before anything is checked: -ENOMEM after telling. */
static int setup(struct node *n)
{
	const struct node_flags *f = n->flags;

	n->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (n->stop_fd < 0 || metrics_init(&n->metrics) < 0 ||
	    pthread_mutex_init(&n->sync_lock, NULL) != 0 ||
	    asprintf(&n->pool_file, "%s/" NODE_POOL_FILE, f->cni_conf_dir) < 0 ||
	    asprintf(&n->user_agent, "ipam-node/%s (cni-rdma-plugins) node/%s", PROJECT_VERSION,
		     f->node_name) < 0) {
		fprintf(stderr, "ipam-node: out of memory\n");
		return -ENOMEM;
	}
	{
		char interval[32], count[32];

		snprintf(interval, sizeof(interval), "%ldms", f->stale_check_interval_ms);
		snprintf(count, sizeof(count), "%ld", f->stale_check_count);
		klog_info(0, "start IPAM node daemon", "version", PROJECT_VERSION, "node", f->node_name,
			  "IPPools Namespace", f->ippools_namespace, "store", f->store_file, "poolFile",
			  n->pool_file, "staleIPCheckInterval", interval, "countBeforeRelease", count,
			  NULL);
	}
	return 0;
}

static void node_free(struct node *n, struct worker *w, struct serve *probes,
		      struct serve *metrics_srv)
{
	/* A /metrics still answering must not read a server stopped already. */
	metrics_set_servers(&n->metrics, NULL, NULL);
	serve_stop(probes);
	serve_stop(metrics_srv);
	for (int i = 0; i < N_THREADS; i++)
		api_client_free(w[i].client);
	node_pools_stop(n);
	api_conn_free(&n->conn);
	api_cleanup();
	metrics_free(&n->metrics);
	free(n->pool_file);
	free(n->user_agent);
	if (n->store_lock_fd >= 0)
		close(n->store_lock_fd);
	if (n->owner_fd >= 0)
		close(n->owner_fd);
	if (n->stop_fd >= 0)
		close(n->stop_fd);
}

/* Return: 0, or -1 after logging (@stuck: a thread started did not end). */
static int start_threads(struct node *n, struct worker *w, struct daemon_thread *th, bool *stuck)
{
	for (int i = 0; i < N_THREADS; i++) {
		w[i] = (struct worker){ .n = n, .what = i };
		if (i == T_CLEANER && n->flags->stale_check_interval_ms == 0)
			continue;
		if (api_client_new(&n->conn, n->user_agent, n->stop_fd, &w[i].client) < 0 ||
		    daemon_thread_start(&th[i], work, &w[i]) < 0) {
			klog_error("cannot start a thread", "cannot start", NULL);
			*stuck = !daemon_threads_stop(th, N_THREADS, n->stop_fd, STOP_THREADS_MS);
			return -1;
		}
	}
	return 0;
}

/*
 * The threads' life: started, then stopped at SIGTERM (@stop_at: when). Return: the exit
 * status, 1 when a thread could not start (@stuck: one started did not end).
 */
static int run_threads(struct node *n, struct worker *w, struct daemon_thread *th,
		       sigset_t *sigs, int64_t *stop_at, bool *stuck)
{
	if (start_threads(n, w, th, stuck) < 0)
		return 1;
	daemon_wait(sigs, 1, retry_sync, n);
	*stop_at = clock_mono_ms();
	*stuck = !daemon_threads_stop(th, N_THREADS, n->stop_fd, STOP_THREADS_MS);
	if (!*stuck)
		klog_info(0, "IPAM node daemon stopped", NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct node_flags f;
	struct worker w[N_THREADS] = { 0 };
	struct daemon_thread th[N_THREADS] = { 0 };
	struct serve *probes = NULL, *metrics_srv = NULL;
	int64_t stop_at = 0;
	sigset_t sigs;
	int rc = 1, r;
	bool stuck = false;

	/*
	 * One malloc arena for every thread: each reflector thread's arena would otherwise keep
	 * the pages of the largest pool status it parsed (megabytes as a json-c tree), and the
	 * peak memory would grow with the threads; the threads seldom allocate at once.
	 */
	(void)mallopt(M_ARENA_MAX, 1);
	r = node_flags_parse(argc, (const char *const *)argv, &f, stderr);
	if (r <= 0)
		return r < 0 ? 1 : 0;
	if (check_flags(&f, stderr) < 0)
		return 1;
	daemon_setup(f.logging_format, (int)f.v, &sigs);

	node = (struct node){ .flags = &f, .owner_fd = -1, .store_lock_fd = -1 };
	if (setup(&node) < 0)
		return 1;
	if (api_init() < 0 || node_pools_start(&node) < 0) {
		klog_error("out of memory", "cannot start", NULL);
		goto out;
	}
	rc = check_start_stoppable(&node, &sigs, &probes, &metrics_srv);
	if (rc == 0)
		rc = prepare(&node, &sigs);
	if (rc == 0)
		rc = run_threads(&node, w, th, &sigs, &stop_at, &stuck);
	else if (rc < 0)
		rc = 0;
out:
	/* However it ends, once the store was ours: not running, the store is the reference's.
	 * No thread holds the node lock across a wait: a stuck one does not keep this out. A
	 * store not handed over is a failure: the reference daemon cannot start on it. */
	if (!node_store_handover(&node, stop_at ? stop_at + STOP_BUDGET_MS
					   : clock_mono_ms() + HANDOVER_LOCK_WAIT_MS))
		rc = 1;
	if (stuck) {
		/* What it was writing is replaced by rename: ending under it is safe, freeing
		 * what it uses is not. */
		klog_error("a thread did not end in time", "IPAM node daemon stopped", NULL);
		_exit(rc);
	}
	node_free(&node, w, probes, metrics_srv);
	return rc;
}
