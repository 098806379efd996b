/*
 * ipam-controller: nv-ipam's cluster program, run by the Network Operator's nv-ipam-controller Deployment
 *
 * At start (any failure ends it with status 1): the flags, the API connection, the probe
 * and metrics servers, with --webhook the webhook's TLS server. Then threads work until
 * SIGTERM or SIGINT: a mirror each of the Nodes (names and labels only), the IPPools and
 * the CIDRPools of --ippools-namespace; with --leader-elect the election on the Lease; and
 * the reconciler, which writes only while this replica leads. Every replica mirrors and
 * answers the webhook, so that a new leader starts from a warm mirror. The main thread
 * waits for the signal (re-reading the webhook's certificate files every 10 s) and stops
 * every thread through one eventfd that their waits watch; a leader releases the lease.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/conn.h"
#include "ipam/nv-ipam/api/reflector.h"
#include "ipam/nv-ipam/controller/admission.h"
#include "ipam/nv-ipam/controller/election.h"
#include "ipam/nv-ipam/controller/events.h"
#include "ipam/nv-ipam/controller/flags.h"
#include "ipam/nv-ipam/controller/metrics.h"
#include "ipam/nv-ipam/controller/overlap_hook.h"
#include "ipam/nv-ipam/controller/reconcile.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/daemon/run.h"
#include "ipam/nv-ipam/serve/http.h"

/*
 * How long the threads get to end after a stop: a renewal under way when it came (4 s at
 * most) and the lease's release (1 s at most); milliseconds when the API answers.
 */
#define STOP_BUDGET_MS 5500L
/* A burst of node events makes one pass. */
#define QUIET_MS 100
#define CERT_CHECK_S 10

enum { T_NODES, T_IPPOOLS, T_CIDRPOOLS, T_ELECTION, T_RECONCILE, N_THREADS };

struct controller {
	const struct controller_flags *flags;
	struct api_conn conn;
	int stop_fd;
	char identity[256];
	char *user_agent;
	char *paths[CM_MIRRORS];
	struct api_reflector *mirrors[CM_MIRRORS];
	struct election *election;
	struct events *events;
	struct reconciler *rec;
	unsigned long webhook_allowed[CM_KINDS], webhook_denied[CM_KINDS], webhook_bad; /* atomic */
	/* The servers /metrics shows: set once started, cleared before they stop. */
	pthread_mutex_t servers_lock;
	struct serve *servers[3]; /* probes, metrics apart from them, webhook */
	time_t started;
};

struct worker {
	struct controller *ctl;
	int what;
	struct api_client *client;
};

static struct controller ctl;

static const char *const mirror_names[CM_MIRRORS] = { "nodes", "ippools", "cidrpools" };

static void *work(void *arg)
{
	struct worker *w = arg;

	if (w->what == T_ELECTION)
		election_run(w->ctl->election, w->client);
	else if (w->what == T_RECONCILE)
		reconcile_run(w->ctl->rec, w->client);
	else
		api_reflector_run(w->ctl->mirrors[w->what], w->client);
	return NULL;
}

/* ---- what the threads tell ---- */

static void on_mirror_changed(void *ctx)
{
	(void)ctx;
	reconcile_wake(ctl.rec, false);
}

static void on_mirror_note(void *ctx, enum api_reflector_note what, const char *msg)
{
	const char *res = mirror_names[(int)(intptr_t)ctx];

	switch (what) {
	case API_NOTE_LISTED:
		klog_info(1, "listed", "resource", res, "detail", msg, NULL);
		break;
	case API_NOTE_ABSENT:
		klog_warning("not served, taken as none (is the CRD installed?)", "resource", res, NULL);
		break;
	case API_NOTE_LIST_FAILED:
		klog_error(msg, "cannot list: trying again", "resource", res, NULL);
		break;
	case API_NOTE_EXPIRED:
		klog_info(0, "watch expired, listing again", "resource", res, "detail", msg, NULL);
		break;
	case API_NOTE_WATCH_FAILED:
		klog_info(0, "watch ended, starting it again", "resource", res, "detail", msg, NULL);
		break;
	case API_NOTE_BAD_EVENT:
		klog_error(msg, "a watch event did not parse, listing again", "resource", res, NULL);
		break;
	}
}

static void on_leading(void *ctx, bool leading)
{
	char lease[300];

	(void)ctx;
	snprintf(lease, sizeof(lease), "%s/%s", ctl.flags->leader_elect_namespace, ELECTION_LEASE_NAME);
	if (leading)
		klog_info(0, "successfully acquired lease", "lease", lease, "identity", ctl.identity, NULL);
	else
		klog_info(0, "leader election lost: not writing until elected again", "lease", lease,
			  "identity", ctl.identity, NULL);
	reconcile_wake(ctl.rec, true);
}

static void on_released(void *ctx)
{
	(void)ctx;
	klog_info(0, "lease released: another replica takes over at once", "identity", ctl.identity, NULL);
}

static void on_election_note(void *ctx, const char *msg)
{
	(void)ctx;
	klog_error(msg, "leader election round failed", NULL);
}

static void on_reconcile_note(void *ctx, const struct reconcile_note *n)
{
	char num[32], kept[32];

	(void)ctx;
	switch (n->kind) {
	case RECONCILE_WRITTEN:
		snprintf(num, sizeof(num), "%zu", n->allocations);
		snprintf(kept, sizeof(kept), "%zu", n->kept);
		klog_info(0, "pool status updated", "kind", n->pool_kind, "pool", n->pool, "resourceVersion",
			  n->rv, "allocations", num, "kept", kept, "identity", ctl.identity, NULL);
		break;
	case RECONCILE_CONFLICT:
		klog_info(1, "the pool changed meanwhile: reading it again", "kind", n->pool_kind, "pool",
			  n->pool, "detail", n->detail, NULL);
		break;
	case RECONCILE_WRITE_FAILED:
		klog_error(n->detail, "cannot write the pool status: trying again", "kind", n->pool_kind,
			   "pool", n->pool, NULL);
		break;
	case RECONCILE_NOT_LEADING:
		klog_info(0, "no longer leading: status not written", "kind", n->pool_kind, "pool", n->pool,
			  NULL);
		break;
	case RECONCILE_INVALID_SPEC:
		klog_error(n->detail, "invalid pool spec, status cleared", "kind", n->pool_kind, "pool",
			   n->pool, NULL);
		break;
	case RECONCILE_NO_ROOM:
		klog_warning("no free block for the node", "kind", n->pool_kind, "pool", n->pool, "node",
			     n->node, NULL);
		break;
	case RECONCILE_OVERLAP:
		klog_warning("pools overlap", "kind", n->pool_kind, "pool", n->pool, "detail", n->detail,
			     NULL);
		break;
	case RECONCILE_EVENT_FAILED:
		klog_error(n->detail, "cannot write an Event", "kind", n->pool_kind, "pool", n->pool, NULL);
		break;
	}
}

/* ---- what is served ---- */

static void readyz(void *ctx, struct serve_reply *r)
{
	struct controller *c = ctx;
	bool ready = true;

	for (int i = 0; i < CM_MIRRORS; i++) {
		struct api_reflector_stats st;

		api_reflector_stats(c->mirrors[i], &st);
		ready &= st.synced;
	}
	/* Not ready until Nodes and pools are listed once (RBAC refused, say): see the log. */
	r->status = ready ? 200 : 500;
	r->body = strdup(ready ? "ok" : "nodes and pools are not listed yet: see the log");
	r->len = r->body ? strlen(r->body) : 0;
}

static void set_servers_names(struct prom_server *v)
{
	v[0].name = "probes";
	v[1].name = "metrics";
	v[2].name = "webhook";
}

/* The servers /metrics shows (all NULL before they stop). */
static void set_servers(struct controller *c, struct serve *probes, struct serve *metrics_srv,
			struct serve *hook_srv)
{
	pthread_mutex_lock(&c->servers_lock);
	c->servers[0] = probes;
	c->servers[1] = metrics_srv;
	c->servers[2] = hook_srv;
	pthread_mutex_unlock(&c->servers_lock);
}

static void metrics(void *ctx, struct serve_reply *r)
{
	struct controller *c = ctx;
	struct controller_numbers n = { .started = c->started };

	n.leading = c->election ? election_leading(c->election) : true;
	if (c->election)
		election_stats(c->election, &n.leader_transitions, &n.election_failures);
	reconcile_stats(c->rec, &n.reconcile);
	request_counts(n.requests);
	for (int i = 0; i < CM_MIRRORS; i++)
		api_reflector_stats(c->mirrors[i], &n.mirrors[i]);
	for (int i = 0; i < CM_KINDS; i++) {
		n.webhook_allowed[i] = __atomic_load_n(&c->webhook_allowed[i], __ATOMIC_RELAXED);
		n.webhook_denied[i] = __atomic_load_n(&c->webhook_denied[i], __ATOMIC_RELAXED);
	}
	n.webhook_bad = __atomic_load_n(&c->webhook_bad, __ATOMIC_RELAXED);
	set_servers_names(n.servers);
	pthread_mutex_lock(&c->servers_lock);
	for (int i = 0; i < 3; i++) {
		n.servers[i].up = c->servers[i];
		serve_connections(c->servers[i], &n.servers[i].st);
	}
	pthread_mutex_unlock(&c->servers_lock);
	if (controller_metrics_render(&n, &r->body, &r->len) < 0) {
		r->status = 500;
		r->body = NULL;
		return;
	}
	r->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

struct hook {
	const char *path;
	int kind;
};

static const struct hook hooks[CM_KINDS] = {
	[CM_IPPOOL] = { ADMISSION_PATH_IPPOOL, CM_IPPOOL },
	[CM_CIDRPOOL] = { ADMISSION_PATH_CIDRPOOL, CM_CIDRPOOL },
};

/* The IPPools and CIDRPools mirrored now, in one array. */
static int pools_now(struct json_object ***ret, size_t *ret_n)
{
	struct json_object **ipp = NULL, **cidr = NULL, **v;
	size_t n_ipp = 0, n_cidr = 0;

	if (api_reflector_snapshot(ctl.mirrors[CM_IPPOOLS], &ipp, &n_ipp) < 0)
		return -ENOMEM;
	if (api_reflector_snapshot(ctl.mirrors[CM_CIDRPOOLS], &cidr, &n_cidr) < 0) {
		api_objects_free(ipp, n_ipp);
		return -ENOMEM;
	}
	v = realloc(ipp, (n_ipp + n_cidr + 1) * sizeof(*v));
	if (!v) {
		api_objects_free(ipp, n_ipp);
		api_objects_free(cidr, n_cidr);
		return -ENOMEM;
	}
	if (n_cidr)
		memcpy(v + n_ipp, cidr, n_cidr * sizeof(*v));
	free(cidr);
	*ret = v;
	*ret_n = n_ipp + n_cidr;
	return 0;
}

static void review(void *ctx, const char *body, size_t len, struct serve_reply *r)
{
	const struct hook *h = ctx;
	struct admission_answer a = { 0 };
	struct json_object **objs = NULL;
	struct admission_pools pools = { .ns = ctl.flags->ippools_namespace,
					 .reject = ctl.flags->reject_overlapping_pools };
	int rc;

	rc = pools_now(&objs, &pools.n);
	pools.objs = objs;
	if (rc == 0)
		rc = admission_review_pools(h->path, body, len, &pools, &a);
	api_objects_free(objs, pools.n);
	if (rc < 0) {
		r->status = 500;
		r->body = strdup("out of memory\n");
		r->len = r->body ? strlen(r->body) : 0;
		return;
	}
	if (a.allowed < 0) {
		__atomic_add_fetch(&ctl.webhook_bad, 1, __ATOMIC_RELAXED);
		klog_info(1, "webhook request is no AdmissionReview", "path", h->path, "detail", a.message, NULL);
	} else if (a.allowed) {
		__atomic_add_fetch(&ctl.webhook_allowed[h->kind], 1, __ATOMIC_RELAXED);
		klog_info(1, "validation succeeded", "kind", a.kind, "name", a.name, NULL);
		if (a.warnings)
			klog_warning("admitted with a warning: its addresses overlap another pool's",
				     "kind", a.kind, "name", a.name, NULL);
	} else {
		__atomic_add_fetch(&ctl.webhook_denied[h->kind], 1, __ATOMIC_RELAXED);
		klog_info(1, "validation failed", "kind", a.kind, "name", a.name, "reason", a.message, NULL);
	}
	r->status = a.http;
	r->content_type = "application/json";
	r->body = TAKE_PTR(a.body);
	r->len = a.len;
	admission_answer_free(&a);
}

/* The probes first, then /metrics: served together or apart. */
static const struct serve_route all_routes[] = {
	{ "/healthz", daemon_healthz, &ctl },
	{ "/readyz", readyz, &ctl },
	{ "/metrics", metrics, &ctl },
};
static const struct serve_post_route webhook_routes[] = {
	{ ADMISSION_PATH_IPPOOL, review, (void *)&hooks[CM_IPPOOL], ADMISSION_BODY_MAX_BYTES },
	{ ADMISSION_PATH_CIDRPOOL, review, (void *)&hooks[CM_CIDRPOOL], ADMISSION_BODY_MAX_BYTES },
};

/* ---- start and stop ---- */

static int setup(struct controller *c)
{
	const struct controller_flags *f = c->flags;
	_cleanup_free_ char *ns = api_escape(f->ippools_namespace);
	struct cni_err err = { 0 };

	if (election_identity(c->identity, sizeof(c->identity)) < 0 || !ns ||
	    asprintf(&c->user_agent, "ipam-controller/%s (cni-rdma-plugins)", PROJECT_VERSION) < 0 ||
	    asprintf(&c->paths[CM_NODES], "/api/v1/nodes") < 0 ||
	    asprintf(&c->paths[CM_IPPOOLS], "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/%s/ippools", ns) < 0 ||
	    asprintf(&c->paths[CM_CIDRPOOLS], "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/%s/cidrpools", ns) < 0) {
		klog_error("out of memory", "cannot start", NULL);
		return -ENOMEM;
	}
	for (int i = 0; i < CM_MIRRORS; i++) {
		struct api_reflector_config rc = {
			.resource = c->paths[i],
			.path = c->paths[i],
			.changed = on_mirror_changed,
			.note = on_mirror_note,
			.trim = i == CM_NODES ? reconcile_trim_node : NULL,
			.ctx = (void *)(intptr_t)i,
		};

		if (api_reflector_new(&rc, c->stop_fd, &c->mirrors[i]) < 0)
			return -ENOMEM;
	}
	if (f->leader_elect) {
		struct election_config ec = {
			.ns = f->leader_elect_namespace,
			.name = ELECTION_LEASE_NAME,
			.identity = c->identity,
			.lease_s = (f->lease_duration_ms + 999) / 1000,
			.renew_deadline_s = (f->renew_deadline_ms + 999) / 1000,
			.retry_s = (f->retry_period_ms + 999) / 1000,
			.changed = on_leading,
			.released = on_released,
			.note = on_election_note,
		};

		if (election_new(&ec, c->stop_fd, &c->election) < 0)
			return -ENOMEM;
	}
	if (events_new(c->identity, &c->events) < 0)
		return -ENOMEM;
	{
		struct reconcile_config rc = {
			.nodes = c->mirrors[CM_NODES],
			.ippools = c->mirrors[CM_IPPOOLS],
			.cidrpools = c->mirrors[CM_CIDRPOOLS],
			.election = c->election,
			.events = c->events,
			.quiet_ms = QUIET_MS,
			.note = on_reconcile_note,
		};

		if (reconcile_new(&rc, c->stop_fd, &c->rec) < 0)
			return -ENOMEM;
	}
	if (api_conn_load(f->kubeconfig, &c->conn, &err) < 0) {
		klog_error(err.msg, "failed to read config for k8s client", NULL);
		return -EINVAL;
	}
	klog_info(0, "API server", "server", c->conn.server, "from", c->conn.origin, NULL);
	return 0;
}

static void stop_threads(struct daemon_thread *th, int stop_fd)
{
	if (!daemon_threads_stop(th, N_THREADS, stop_fd, STOP_BUDGET_MS)) {
		/* Nothing is half-written: statuses are single requests. */
		klog_error("a thread did not end in time", "IPAM controller stopped", NULL);
		_exit(0);
	}
}

struct tls_watch {
	struct serve *srv;
	const char *cert;
};

/* Between signals: the webhook's certificate re-read when it changed. */
static void reload_cert(void *ctx)
{
	const struct tls_watch *t = ctx;
	struct cni_err err = { 0 };
	int r = serve_reload_tls(t->srv, &err);

	if (r > 0)
		klog_info(0, "the webhook's certificate changed: serving the new one", "certificate",
			  t->cert, NULL);
	else if (r < 0)
		klog_error(err.msg, "cannot serve the webhook's new certificate", NULL);
}

static int serve_failed(const struct cni_err *err)
{
	klog_error(err->msg, "unable to start the probe, metrics or webhook server", NULL);
	return -1;
}

/* Return: 0, or -1 after logging. */
static int start_servers(const struct controller_flags *f, struct serve **probes,
			 struct serve **metrics_srv, struct serve **hook_srv, char **cert, char **key)
{
	struct cni_err err = { 0 };
	char hbuf[128], mbuf[128], wbuf[128];

	if (strcmp(f->metrics_bind_address, f->health_probe_bind_address) == 0) {
		if (serve_start(f->health_probe_bind_address, all_routes, 3, probes, &err) < 0)
			return serve_failed(&err);
	} else if (serve_start(f->health_probe_bind_address, all_routes, 2, probes, &err) < 0 ||
		   serve_start(f->metrics_bind_address, all_routes + 2, 1, metrics_srv, &err) < 0) {
		return serve_failed(&err);
	}
	if (f->webhook) {
		if (asprintf(cert, "%s/tls.crt", f->webhook_cert_dir) < 0 ||
		    asprintf(key, "%s/tls.key", f->webhook_cert_dir) < 0) {
			*cert = *key = NULL;
			return -1;
		}
		if (serve_start_tls(f->webhook_bind_address, webhook_routes, 2, *cert, *key, hook_srv, &err) < 0)
			return serve_failed(&err);
		klog_info(0, "serving the validating webhook", "address",
			  serve_address(f->webhook_bind_address, *hook_srv, wbuf, sizeof(wbuf)),
			  "certificate", *cert, NULL);
	}
	/* The ports bound: with port 0 the kernel chose them. */
	klog_info(0, "serving", "probes",
		  serve_address(f->health_probe_bind_address, *probes, hbuf, sizeof(hbuf)), "metrics",
		  serve_address(f->metrics_bind_address, *metrics_srv ? *metrics_srv : *probes, mbuf,
				sizeof(mbuf)), NULL);
	return 0;
}

/* Return: 0, or -1 after logging (the threads started are stopped). */
static int start_threads(struct worker *w, struct daemon_thread *th)
{
	for (int i = 0; i < N_THREADS; i++) {
		w[i] = (struct worker){ .ctl = &ctl, .what = i };
		if (i == T_ELECTION && !ctl.election)
			continue;
		/* The election's requests outlive the stop: it releases the lease after it. */
		if (api_client_new(&ctl.conn, ctl.user_agent, i == T_ELECTION ? -1 : ctl.stop_fd,
				   &w[i].client) < 0 ||
		    daemon_thread_start(&th[i], work, &w[i]) < 0) {
			klog_error("cannot start a thread", "cannot start", NULL);
			stop_threads(th, ctl.stop_fd);
			return -1;
		}
	}
	return 0;
}

static void controller_free(struct worker *w, struct serve *probes, struct serve *metrics_srv,
			    struct serve *hook_srv)
{
	set_servers(&ctl, NULL, NULL, NULL);
	serve_stop(hook_srv);
	serve_stop(probes);
	serve_stop(metrics_srv);
	for (int i = 0; i < N_THREADS; i++)
		api_client_free(w[i].client);
	reconcile_free(ctl.rec);
	events_free(ctl.events);
	election_free(ctl.election);
	for (int i = 0; i < CM_MIRRORS; i++) {
		api_reflector_free(ctl.mirrors[i]);
		free(ctl.paths[i]);
	}
	api_conn_free(&ctl.conn);
	api_cleanup();
	free(ctl.user_agent);
	if (ctl.stop_fd >= 0)
		close(ctl.stop_fd);
}

int main(int argc, char **argv)
{
	struct controller_flags f;
	struct worker w[N_THREADS] = { 0 };
	struct daemon_thread th[N_THREADS] = { 0 };
	struct serve *probes = NULL, *metrics_srv = NULL, *hook_srv = NULL;
	_cleanup_free_ char *cert = NULL, *key = NULL;
	sigset_t sigs;
	int rc = 1, r;

	r = controller_flags_parse(argc, (const char *const *)argv, &f, stderr);
	if (r <= 0)
		return r < 0 ? 1 : 0;
	daemon_setup(f.logging_format, (int)f.v, &sigs);

	ctl = (struct controller){ .flags = &f, .started = time(NULL),
				   .servers_lock = PTHREAD_MUTEX_INITIALIZER };
	ctl.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (ctl.stop_fd < 0 || api_init() < 0) {
		fprintf(stderr, "ipam-controller: cannot start: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < f.n_ignored; i++)
		klog_info(0, "flag taken and ignored", "flag", f.ignored[i], NULL);
	if (setup(&ctl) < 0)
		goto out;
	klog_info(0, "start IPAM controller", "version", PROJECT_VERSION, "poolsNamespace",
		  f.ippools_namespace, "leaderElection", f.leader_elect ? "true" : "false",
		  "identity", ctl.identity, NULL);
	if (start_servers(&f, &probes, &metrics_srv, &hook_srv, &cert, &key) < 0)
		goto out;
	set_servers(&ctl, probes, metrics_srv, hook_srv);
	if (start_threads(w, th) < 0)
		goto out;
	if (!ctl.election)
		klog_info(0, "leader election off: this replica writes", NULL);

	daemon_wait(&sigs, CERT_CHECK_S, reload_cert, &(struct tls_watch){ hook_srv, cert });
	stop_threads(th, ctl.stop_fd);
	rc = 0;
	klog_info(0, "IPAM controller stopped", NULL);
out:
	controller_free(w, probes, metrics_srv, hook_srv);
	return rc;
}
