/*
 * Carving every pool's status.allocations from the mirrored Nodes and pools, written by the leader
 *
 * One thread owns the writes. A pass reads copies of the three mirrors, sorts the nodes by
 * name and gives each pool that changed (or every pool, when the nodes or the leadership
 * changed) to carve_pool(), the code nv-ipam-tool carve runs: the same inputs give the same
 * status, existing allocations kept. A status is written only when it differs, with the
 * resourceVersion it was computed from; the API's 409 sends the pass back to a fresh read.
 * After its own write the reconciler carves from the object the API returned until the
 * mirror catches up, so that its next pass does not compute from the status it replaced.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/reflector.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/controller/election.h"
#include "ipam/nv-ipam/controller/events.h"
#include "ipam/nv-ipam/controller/field_errors.h"
#include "ipam/nv-ipam/controller/overlap_events.h"
#include "ipam/nv-ipam/controller/reconcile.h"
#include "ipam/nv-ipam/controller/request.h"
#include "ipam/nv-ipam/controller/validate.h"
#include "ipam/nv-ipam/k8s/k8s.h"

#define WRITE_TIMEOUT_MS 10000L
#define WRITE_ATTEMPTS 5
#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000

/* What the reconciler remembers of a pool between passes. */
struct memo {
	char *key;                   /* "IPPool/name" */
	char *seen_rv;               /* the resourceVersion last carved; NULL: carve next pass */
	char *pre_rv;                /* the version our last write replaced */
	struct json_object *written; /* the pool as that write returned it */
	bool failed;                 /* the last write failed: carve again at the retry */
	bool alive;                  /* still in the mirror (this pass) */
};

struct reconciler {
	struct reconcile_config cfg;
	int stop_fd;
	int wake_fd;
	pthread_mutex_t lock;
	bool everything;             /* under lock */
	struct reconcile_stats stats; /* under lock */
	/* The run's thread only: */
	struct memo *memos;
	size_t n_memos;
	struct text_buf last_nodes;  /* names and labels of the last pass, to see a change */
	bool was_leading;
	unsigned int backoff_ms;
	struct overlap_seen overlap; /* the overlapping pairs told about */
};

struct pass_nodes {
	struct carve_node *v;
	size_t n;
};

int reconcile_new(const struct reconcile_config *cfg, int stop_fd, struct reconciler **ret)
{
	struct reconciler *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->wake_fd < 0 || pthread_mutex_init(&r->lock, NULL) != 0) {
		int e = r->wake_fd < 0 ? -errno : -ENOMEM;

		if (r->wake_fd >= 0)
			close(r->wake_fd);
		free(r);
		return e;
	}
	r->cfg = *cfg;
	r->stop_fd = stop_fd;
	r->everything = true;
	r->backoff_ms = BACKOFF_FIRST_MS;
	*ret = r;
	return 0;
}

static void memo_clear(struct memo *m)
{
	free(m->key);
	free(m->seen_rv);
	free(m->pre_rv);
	json_object_put(m->written);
	*m = (struct memo){ 0 };
}

void reconcile_free(struct reconciler *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_memos; i++)
		memo_clear(&r->memos[i]);
	free(r->memos);
	text_buf_free(&r->last_nodes);
	overlap_seen_free(&r->overlap);
	close(r->wake_fd);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

void reconcile_wake(struct reconciler *r, bool everything)
{
	uint64_t one = 1;

	pthread_mutex_lock(&r->lock);
	r->everything |= everything;
	pthread_mutex_unlock(&r->lock);
	(void)!write(r->wake_fd, &one, sizeof(one));
}

void reconcile_stats(struct reconciler *r, struct reconcile_stats *ret)
{
	pthread_mutex_lock(&r->lock);
	*ret = r->stats;
	pthread_mutex_unlock(&r->lock);
}

int reconcile_trim_node(void *ctx, struct json_object *node, struct json_object **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	struct json_object *meta = json_object_new_object(), *labels = NULL;
	struct json_object *src = k8s_object_member(node, "metadata", "labels");
	const char *rv = json_object_get_string(k8s_object_member(node, "metadata", "resourceVersion"));
	int r;

	(void)ctx;
	if (!o || !meta) {
		json_object_put(meta);
		return -ENOMEM;
	}
	r = k8s_json_add(o, "metadata", meta);
	r = r ? r : k8s_json_add_str(meta, "name", k8s_object_name(node) ? k8s_object_name(node) : "");
	r = r ? r : k8s_json_add_str(meta, "resourceVersion", rv ? rv : "");
	if (!r && json_object_is_type(src, json_type_object)) {
		r = json_object_deep_copy(src, &labels, NULL) < 0 ? -ENOMEM : 0;
		r = r ? r : k8s_json_add(meta, "labels", labels);
	}
	if (r)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

static void note(struct reconciler *r, enum reconcile_note_kind kind, struct json_object *pool,
		 const char *rv, const char *node, const char *detail, size_t allocations, size_t kept)
{
	struct reconcile_note n = {
		.kind = kind,
		.pool_kind = k8s_object_kind(pool),
		.pool = k8s_object_name(pool),
		.rv = rv,
		.node = node,
		.detail = detail,
		.allocations = allocations,
		.kept = kept,
	};

	if (r->cfg.note)
		r->cfg.note(r->cfg.ctx, &n);
}

#define STAT_ADD(r, field, v)                                                                      \
	do {                                                                                       \
		pthread_mutex_lock(&(r)->lock);                                                    \
		(r)->stats.field += (v);                                                           \
		pthread_mutex_unlock(&(r)->lock);                                                  \
	} while (0)

static bool leading(struct reconciler *r)
{
	return !r->cfg.election || election_leading(r->cfg.election);
}

/* ---- one pool ---- */

/* A pool's path, "/apis/.../namespaces/NS/ippools/NAME", with @suffix ("/status" or ""). */
static char *pool_path(struct json_object *pool, const char *suffix)
{
	const char *ns = json_object_get_string(k8s_object_member(pool, "metadata", "namespace"));
	bool cidr = strcmp(k8s_object_kind(pool), "CIDRPool") == 0;
	_cleanup_free_ char *e_ns = api_escape(ns ? ns : ""), *e_name = NULL;
	char *p;

	e_name = api_escape(k8s_object_name(pool) ? k8s_object_name(pool) : "");
	if (!e_ns || !e_name ||
	    asprintf(&p, "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/%s/%s/%s%s", e_ns,
		     cidr ? "cidrpools" : "ippools", e_name, suffix) < 0)
		return NULL;
	return p;
}

/* What the controller would write: @ret_desired, and @ret_carve for its Events. */
struct verdict {
	struct json_object *desired;  /* status.allocations */
	struct validate_result invalid; /* the webhook's rules: InvalidSpec when any */
	struct carve_result carve;
};

static void verdict_free(struct verdict *v)
{
	json_object_put(v->desired);
	validate_result_free(&v->invalid);
	carve_result_free(&v->carve);
	*v = (struct verdict){ 0 };
}

static int judge(struct json_object *pool, const struct pass_nodes *nodes, struct verdict *ret)
{
	bool cidr = strcmp(k8s_object_kind(pool), "CIDRPool") == 0;
	struct verdict v = { 0 };
	struct cni_err err = { 0 };
	int r;

	r = cidr ? validate_cidrpool(pool, &v.invalid) : validate_ippool(pool, &v.invalid);
	if (r == 0 && v.invalid.n == 0)
		r = carve_pool(pool, nodes->v, nodes->n, &v.carve, &err);
	/* carve refuses a few specs the rules let through: no node matches them (status []). */
	if (r == 0 && (v.invalid.n || v.carve.invalid))
		r = (v.desired = json_object_new_array()) ? 0 : -ENOMEM;
	else if (r == 0)
		r = carve_result_json(&v.carve, &v.desired);
	if (r < 0) {
		verdict_free(&v);
		return r;
	}
	*ret = v;
	return 0;
}

static int emit(struct reconciler *r, struct api_client *c, struct json_object *pool,
		const char *reason, const char *message)
{
	bool cidr = strcmp(k8s_object_kind(pool), "CIDRPool") == 0;
	struct cni_err err = { 0 };
	int rc;

	rc = events_emit(r->cfg.events, c, pool, cidr ? "CIDRPoolController" : "IPPoolController",
			 "Warning", reason, message, &err);
	if (rc < 0)
		note(r, RECONCILE_EVENT_FAILED, pool, NULL, NULL, err.msg, 0, 0);
	if (rc == 0)
		STAT_ADD(r, events, 1);
	else if (rc == 1)
		STAT_ADD(r, events_held, 1);
	return rc;
}

struct overlap_ctx {
	struct reconciler *r;
	struct api_client *c;
};

static int emit_overlap(void *ctx, struct json_object *pool, const char *message)
{
	struct overlap_ctx *o = ctx;

	note(o->r, RECONCILE_OVERLAP, pool, NULL, NULL, message, 0, 0);
	return emit(o->r, o->c, pool, RECONCILE_OVERLAP_REASON, message);
}

/* Every pool against every other: a pool's own pass cannot see a pair. */
static int tell_overlaps(struct reconciler *r, struct api_client *c, struct json_object **ipp,
			 size_t n_ipp, struct json_object **cidr, size_t n_cidr)
{
	_cleanup_free_ struct json_object **all = NULL;
	struct overlap_ctx o = { r, c };

	if (!r->cfg.events || !leading(r))
		return 0;
	all = malloc((n_ipp + n_cidr + 1) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	if (n_ipp)
		memcpy(all, ipp, n_ipp * sizeof(*all));
	if (n_cidr)
		memcpy(all + n_ipp, cidr, n_cidr * sizeof(*all));
	return overlap_events_pass(&r->overlap, all, n_ipp + n_cidr, emit_overlap, &o);
}

static void emit_events(struct reconciler *r, struct api_client *c, struct json_object *pool,
			const struct verdict *v)
{
	bool cidr = strcmp(k8s_object_kind(pool), "CIDRPool") == 0;

	if (!r->cfg.events || !leading(r))
		return;
	if (v->invalid.n) {
		_cleanup_free_ char *msg = validate_message(&v->invalid);

		note(r, RECONCILE_INVALID_SPEC, pool, NULL, NULL, msg ? msg : "", 0, 0);
		emit(r, c, pool, "InvalidSpec", msg ? msg : "invalid spec");
		return;
	}
	for (size_t i = 0; i < v->carve.n_unplaced; i++) {
		char msg[512];

		snprintf(msg, sizeof(msg), "no free %s left in the pool for node %.253s",
			 cidr ? "prefix" : "range of addresses", v->carve.unplaced[i]);
		note(r, RECONCILE_NO_ROOM, pool, NULL, v->carve.unplaced[i], NULL, 0, 0);
		emit(r, c, pool, cidr ? "NoFreePrefixes" : "NoFreeRanges", msg);
	}
}

/* The status merge patch, with the resourceVersion it was computed from as precondition. */
static int patch_body(struct json_object *pool, struct json_object *desired, struct json_object **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	struct json_object *meta = json_object_new_object(), *status = json_object_new_object();
	const char *rv = json_object_get_string(k8s_object_member(pool, "metadata", "resourceVersion"));
	int r;

	if (!o || !meta || !status) {
		json_object_put(meta);
		json_object_put(status);
		return -ENOMEM;
	}
	r = k8s_json_add(o, "metadata", meta);
	if (r) {
		json_object_put(status);
		return r;
	}
	r = k8s_json_add(o, "status", status);
	r = r ? r : k8s_json_add_str(meta, "resourceVersion", rv ? rv : "");
	r = r ? r : k8s_json_add(status, "allocations", json_object_get(desired));
	if (r)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

static void memo_set(char **slot, const char *s)
{
	char *copy = s ? strdup(s) : NULL;

	free(*slot);
	/* Out of memory: NULL, which only makes the next pass carve again. */
	*slot = copy;
}

/*
 * etcd refuses a request over its limit (1.5 MiB by default) and the API server answers
 * 500 with etcd's words; a body past the API server's own limit is a 413. A status of one
 * entry a node reaches it at about 20,000 nodes: retrying cannot help, splitting the pool
 * does.
 */
static bool too_large(const struct api_status *st)
{
	return st->http == 413 || (st->http == 500 && strstr(st->message, "request is too large"));
}

static void say_too_large(struct cni_err *err, const struct api_status *st, size_t entries,
			  size_t bytes)
{
	/* The failure is recorded already (the first one wins): this one says more. */
	*err = (struct cni_err){ 0 };
	cni_err_set(err, CNI_ERR_IO, -EFBIG,
		    "the status of %zu allocations (%zu bytes) is larger than the API server "
		    "stores (HTTP %ld: %s): split the pool into pools of fewer nodes by "
		    "nodeSelector (docs/nv-ipam.md, \"At cluster scale\")",
		    entries, bytes, st->http, st->message);
}

/*
 * Carve one pool and write its status when it differs. 0 when done (or nothing to do, or
 * not leading), negative when a write failed and the pool must be tried again.
 */
static int reconcile_pool(struct reconciler *r, struct api_client *c, struct json_object *cached,
			  const struct pass_nodes *nodes, struct memo *m)
{
	_cleanup_(json_object_putp) struct json_object *fresh = NULL;
	struct json_object *pool = cached;
	struct verdict v = { 0 };
	int rc = 0;

	for (int attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
		_cleanup_(json_object_putp) struct json_object *body = NULL, *out = NULL;
		_cleanup_free_ char *path = NULL;
		struct api_status st;
		struct cni_err err = { 0 };
		struct json_object *current = k8s_object_member(pool, "status", "allocations");
		const char *rv;

		verdict_free(&v);
		rc = judge(pool, nodes, &v);
		STAT_ADD(r, carved, 1);
		if (rc < 0)
			break;
		if (current && json_object_equal(current, v.desired))
			break;
		if (!leading(r)) {
			note(r, RECONCILE_NOT_LEADING, pool, NULL, NULL, NULL, 0, 0);
			break;
		}
		path = pool_path(pool, "/status");
		if (!path || patch_body(pool, v.desired, &body) < 0) {
			rc = -ENOMEM;
			break;
		}
		rc = request_json(c, "PATCH", path, body, "application/merge-patch+json", WRITE_TIMEOUT_MS,
				  &out, &st, &err);
		if (rc == 0) {
			rv = json_object_get_string(k8s_object_member(out, "metadata", "resourceVersion"));
			STAT_ADD(r, writes, 1);
			note(r, RECONCILE_WRITTEN, pool, rv ? rv : "", NULL, NULL,
			     json_object_array_length(v.desired), v.carve.n_kept);
			memo_set(&m->pre_rv, json_object_get_string(k8s_object_member(pool, "metadata",
										      "resourceVersion")));
			json_object_put(m->written);
			m->written = TAKE_PTR(out);
			break;
		}
		if (st.http == 404) {
			rc = 0; /* deleted meanwhile */
			break;
		}
		if (st.http != 409) {
			STAT_ADD(r, write_failures, 1);
			if (too_large(&st))
				say_too_large(&err, &st, json_object_array_length(v.desired),
					      strlen(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN)));
			note(r, RECONCILE_WRITE_FAILED, pool, NULL, NULL, err.msg, 0, 0);
			break;
		}
		/* Someone changed the pool since it was read: read it, carve it again. */
		STAT_ADD(r, conflicts, 1);
		note(r, RECONCILE_CONFLICT, pool, NULL, NULL, err.msg, 0, 0);
		json_object_put(out);
		out = NULL;
		free(path);
		path = pool_path(pool, "");
		if (!path) {
			rc = -ENOMEM;
			break;
		}
		/* The 409 is handled: a failure of the read must be logged as its own. */
		err = (struct cni_err){ 0 };
		rc = request_json(c, NULL, path, NULL, NULL, WRITE_TIMEOUT_MS, &out, &st, &err);
		if (rc < 0) {
			if (st.http == 404)
				rc = 0;
			else
				note(r, RECONCILE_WRITE_FAILED, pool, NULL, NULL, err.msg, 0, 0);
			break;
		}
		json_object_put(fresh);
		pool = fresh = TAKE_PTR(out);
		rc = -EAGAIN; /* if the attempts run out */
	}
	if (rc == 0)
		emit_events(r, c, pool, &v);
	verdict_free(&v);
	return rc;
}

/* ---- a pass ---- */

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct carve_node *)a)->name, ((const struct carve_node *)b)->name);
}

static struct memo *memo_get(struct reconciler *r, const char *key)
{
	struct memo *v;

	for (size_t i = 0; i < r->n_memos; i++)
		if (strcmp(r->memos[i].key, key) == 0)
			return &r->memos[i];
	v = realloc(r->memos, (r->n_memos + 1) * sizeof(*v));
	if (!v)
		return NULL;
	r->memos = v;
	v[r->n_memos] = (struct memo){ .key = strdup(key) };
	if (!v[r->n_memos].key)
		return NULL;
	return &v[r->n_memos++];
}

static void memo_sweep(struct reconciler *r)
{
	size_t out = 0;

	for (size_t i = 0; i < r->n_memos; i++) {
		if (!r->memos[i].alive) {
			memo_clear(&r->memos[i]);
			continue;
		}
		r->memos[i].alive = false;
		r->memos[out++] = r->memos[i];
	}
	r->n_memos = out;
}

/* The nodes sorted by name; whether their names or labels differ from the last pass. */
static int take_nodes(struct reconciler *r, struct json_object **objs, size_t n,
		      struct pass_nodes *ret, bool *ret_changed)
{
	struct carve_node *v = calloc(n + 1, sizeof(*v));
	struct text_buf now = { 0 };
	size_t m = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *labels = k8s_object_member(objs[i], "metadata", "labels");
		const char *name = k8s_object_name(objs[i]);

		if (!name || !*name)
			continue;
		v[m].name = name;
		v[m].labels = json_object_is_type(labels, json_type_object) ? labels : NULL;
		m++;
	}
	qsort(v, m, sizeof(*v), node_cmp);
	for (size_t i = 0; i < m; i++) {
		text_buf_puts(&now, v[i].name);
		text_buf_putc(&now, '\n');
		if (v[i].labels)
			text_buf_puts(&now, json_object_to_json_string_ext(v[i].labels, JSON_C_TO_STRING_PLAIN));
		text_buf_putc(&now, '\n');
	}
	if (now.oom) {
		text_buf_free(&now);
		free(v);
		return -ENOMEM;
	}
	*ret_changed = now.len != r->last_nodes.len ||
		       (now.len && memcmp(now.data, r->last_nodes.data, now.len) != 0);
	text_buf_free(&r->last_nodes);
	r->last_nodes = now;
	ret->v = v;
	ret->n = m;
	return 0;
}

/* One pass over every pool; negative when a pool must be tried again later. */
static int pass(struct reconciler *r, struct api_client *c, bool everything)
{
	struct json_object **nodes = NULL, **ipp = NULL, **cidr = NULL;
	size_t n_nodes = 0, n_ipp = 0, n_cidr = 0;
	struct pass_nodes pn = { 0 };
	int64_t t0 = clock_mono_us();
	bool nodes_changed = false;
	int result = 0, told;

	if (api_reflector_snapshot(r->cfg.nodes, &nodes, &n_nodes) < 0 ||
	    api_reflector_snapshot(r->cfg.ippools, &ipp, &n_ipp) < 0 ||
	    api_reflector_snapshot(r->cfg.cidrpools, &cidr, &n_cidr) < 0 ||
	    take_nodes(r, nodes, n_nodes, &pn, &nodes_changed) < 0) {
		result = -ENOMEM;
		goto out;
	}
	everything |= nodes_changed;
	for (size_t k = 0; k < n_ipp + n_cidr; k++) {
		struct json_object *pool = k < n_ipp ? ipp[k] : cidr[k - n_ipp];
		const char *rv = json_object_get_string(k8s_object_member(pool, "metadata", "resourceVersion"));
		const char *name = k8s_object_name(pool);
		struct json_object *use = pool;
		char key[300];
		struct memo *m;
		int rc;

		if (!name || !rv)
			continue;
		snprintf(key, sizeof(key), "%s/%s", k < n_ipp ? "IPPool" : "CIDRPool", name);
		m = memo_get(r, key);
		if (!m) {
			result = -ENOMEM;
			break;
		}
		m->alive = true;
		/*
		 * The mirror moved past the version our write replaced: what we wrote is no
		 * longer needed (a pool's status of 10,000 nodes is megabytes as json-c).
		 */
		if (m->written && (!m->pre_rv || strcmp(m->pre_rv, rv) != 0)) {
			json_object_put(m->written);
			m->written = NULL;
			memo_set(&m->pre_rv, NULL);
		}
		if (!everything && !m->failed && m->seen_rv && strcmp(m->seen_rv, rv) == 0)
			continue;
		/* The mirror still holds the version our write replaced: carve what we wrote. */
		if (m->written && m->pre_rv && strcmp(m->pre_rv, rv) == 0)
			use = m->written;
		rc = reconcile_pool(r, c, use, &pn, m);
		/* Only the specs are read after this (overlaps): the copy's status can go now. */
		json_object_object_del(pool, "status");
		m->failed = rc < 0;
		memo_set(&m->seen_rv, rc < 0 ? NULL : rv);
		if (rc < 0)
			result = rc;
	}
	memo_sweep(r);
	/* A failed Event brings the pass back after the backoff, as a failed write does. */
	told = tell_overlaps(r, c, ipp, n_ipp, cidr, n_cidr);
	if (told)
		result = told < 0 ? told : -EAGAIN;
out:
	pthread_mutex_lock(&r->lock);
	r->stats.passes++;
	r->stats.nodes = pn.n;
	r->stats.pools = n_ipp + n_cidr;
	r->stats.last_pass_ms = (double)(clock_mono_us() - t0) / 1000.0;
	pthread_mutex_unlock(&r->lock);
	free(pn.v);
	api_objects_free(nodes, n_nodes);
	api_objects_free(ipp, n_ipp);
	api_objects_free(cidr, n_cidr);
	return result;
}

/* Waits for a change (or @timeout_ms, -1 for none); false when told to stop. */
static bool wait_change(struct reconciler *r, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = r->stop_fd, .events = POLLIN }, { .fd = r->wake_fd, .events = POLLIN } };
	uint64_t v;

	if (poll(p, 2, timeout_ms) < 0 && errno != EINTR)
		return true;
	if (p[0].revents)
		return false;
	if (p[1].revents)
		(void)!read(r->wake_fd, &v, sizeof(v));
	return true;
}

/* After a change, until nothing changed for quiet_ms (at most ten times that). */
static bool settle(struct reconciler *r)
{
	int64_t until = clock_mono_ms() + (int64_t)r->cfg.quiet_ms * 10;

	while (clock_mono_ms() < until) {
		struct pollfd p[2] = { { .fd = r->stop_fd, .events = POLLIN },
				       { .fd = r->wake_fd, .events = POLLIN } };
		uint64_t v;

		if (poll(p, 2, (int)r->cfg.quiet_ms) <= 0)
			return true;
		if (p[0].revents)
			return false;
		(void)!read(r->wake_fd, &v, sizeof(v));
	}
	return true;
}

/* Whether every mirror has listed once (or found its collection not served). */
static bool mirrors_listed(struct reconciler *r)
{
	struct api_reflector *const m[] = { r->cfg.nodes, r->cfg.ippools, r->cfg.cidrpools };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct api_reflector_stats st;

		api_reflector_stats(m[i], &st);
		if (!st.synced)
			return false;
	}
	return true;
}

void reconcile_run(struct reconciler *r, struct api_client *c)
{
	unsigned int wait_ms = 0;
	bool retry = false;

	for (;;) {
		bool everything, now_leading;
		int rc;

		if (!wait_change(r, retry ? (int)wait_ms : -1) || !settle(r))
			return;
		/*
		 * Before the nodes are listed, a pass would carve every pool over none of them
		 * and write statuses that drop every allocation (and another write when the
		 * list ends). The end of each first list wakes the reconciler again.
		 */
		if (!mirrors_listed(r)) {
			retry = false;
			continue;
		}
		pthread_mutex_lock(&r->lock);
		everything = r->everything;
		r->everything = false;
		pthread_mutex_unlock(&r->lock);
		now_leading = leading(r);
		/* Leadership gained: every pool, from what the mirrors say now. */
		everything |= now_leading && !r->was_leading;
		r->was_leading = now_leading;
		if (!now_leading) {
			retry = false;
			continue;
		}
		rc = pass(r, c, everything);
		/*
		 * A pass frees copies of every pool and node, tens of megabytes at cluster scale,
		 * in this thread's arena: give them back rather than hold them until the next.
		 */
		malloc_trim(0);
		retry = rc < 0;
		wait_ms = r->backoff_ms;
		if (retry)
			r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : r->backoff_ms * 2;
		else
			r->backoff_ms = BACKOFF_FIRST_MS;
	}
}
