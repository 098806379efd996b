/*
 * ipam-node's pool sync: the node pool file kept equal to the IPPool and CIDRPool status
 *
 * Each kind is mirrored by a reflector (list, then watch) on a thread of its own; after
 * every change either one renders the file from both (carve/nodefile.c, what nv-ipam-tool
 * node-pools writes too) and replaces it atomically when its bytes differ. A kind whose
 * CRD is not installed counts as none; one that answers 404 after it was listed keeps its
 * pools for a while (an API server restarting: api/reflector.c). Nothing is written
 * before both kinds are listed once: a half-known set of pools would remove the other
 * kind's blocks.
 *
 * A pool's status holds an entry per node of the cluster (10,000 nodes: ~800 KB of JSON,
 * megabytes as json-c objects); each pool is trimmed as it arrives to what this node's
 * render reads (carve_pool_trim()), so the objects kept, copied and rendered on every sync
 * are a few entries each, whatever the cluster's size.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/reflector.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/carve/nodefile.h"
#include "ipam/nv-ipam/carve/skim.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/overlap.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/node.h"
#include "ipam/nv-ipam/pool/pool.h"

#define POOL_FILE_MAX_BYTES (64u << 20)

static const char *const kinds[METRICS_KINDS] = { "ippools", "cidrpools" };
static const char *const kind_names[METRICS_KINDS] = { "IPPool", "CIDRPool" };

struct kind_ctx {
	struct node *n;
	int kind;
	char *path;
};

static struct kind_ctx kind_ctx[METRICS_KINDS];
static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_changed(void *ctx)
{
	struct kind_ctx *k = ctx;

	node_pools_sync(k->n);
}

static int on_trim(void *ctx, struct json_object *obj, struct json_object **ret)
{
	struct kind_ctx *k = ctx;

	return carve_pool_trim(obj, strcmp(kind_names[k->kind], "CIDRPool") == 0,
			       k->n->flags->node_name, ret);
}

static int on_skim(void *ctx, const char *text, size_t len, char **ret, size_t *ret_len)
{
	struct kind_ctx *k = ctx;

	return carve_status_skim(text, len, k->n->flags->node_name,
				 strcmp(kind_names[k->kind], "CIDRPool") == 0, ret, ret_len);
}

static void on_note(void *ctx, enum api_reflector_note what, const char *msg)
{
	struct kind_ctx *k = ctx;
	struct metrics *m = &k->n->metrics;

	switch (what) {
	case API_NOTE_LISTED:
		klog_info(1, "pools listed", "resource", kinds[k->kind], "detail", msg, NULL);
		break;
	case API_NOTE_ABSENT:
		klog_warning("pools not served, taken as none", "resource", kinds[k->kind], "detail", msg,
			     NULL);
		break;
	case API_NOTE_LIST_FAILED:
		klog_error(msg, "cannot list pools: the node pool file stays as it is", "resource",
			   kinds[k->kind], NULL);
		break;
	case API_NOTE_EXPIRED:
		pthread_mutex_lock(&m->lock);
		m->relists[k->kind]++;
		pthread_mutex_unlock(&m->lock);
		klog_info(0, "watch expired, listing again", "resource", kinds[k->kind], "detail", msg,
			  NULL);
		break;
	case API_NOTE_WATCH_FAILED:
		pthread_mutex_lock(&m->lock);
		m->watch_restarts[k->kind]++;
		pthread_mutex_unlock(&m->lock);
		klog_info(0, "watch ended, starting it again", "resource", kinds[k->kind], "detail", msg,
			  NULL);
		break;
	case API_NOTE_BAD_EVENT:
		klog_error(msg, "a watch event did not parse, listing again", "resource", kinds[k->kind],
			   NULL);
		break;
	}
}

int node_pools_start(struct node *n)
{
	_cleanup_free_ char *ns = api_escape(n->flags->ippools_namespace);

	if (!ns)
		return -ENOMEM;
	for (int k = 0; k < METRICS_KINDS; k++) {
		struct api_reflector_config cfg = { .resource = kinds[k], .changed = on_changed,
						    .note = on_note, .trim = on_trim, .skim = on_skim,
						    .parse_lock = &parse_lock, .ctx = &kind_ctx[k] };

		kind_ctx[k] = (struct kind_ctx){ .n = n, .kind = k };
		if (asprintf(&kind_ctx[k].path, "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/%s/%s", ns,
			     kinds[k]) < 0) {
			kind_ctx[k].path = NULL;
			return -ENOMEM;
		}
		cfg.path = kind_ctx[k].path;
		if (api_reflector_new(&cfg, n->stop_fd, &n->refl[k]) < 0)
			return -ENOMEM;
	}
	return 0;
}

void node_pools_stop(struct node *n)
{
	for (int k = 0; k < METRICS_KINDS; k++) {
		api_reflector_free(n->refl[k]);
		n->refl[k] = NULL;
		free(kind_ctx[k].path);
		kind_ctx[k].path = NULL;
	}
	for (size_t i = 0; i < n->n_notes; i++)
		free(n->notes[i]);
	free(n->notes);
	n->notes = NULL;
	n->n_notes = 0;
}

bool node_pools_ready(struct node *n)
{
	bool ready;

	pthread_mutex_lock(&n->metrics.lock);
	ready = n->metrics.ready;
	pthread_mutex_unlock(&n->metrics.lock);
	return ready;
}

/* Each refusal is logged when it first appears; one that goes away is forgotten. */
static void log_notes(struct node *n, char *text)
{
	char **now = NULL;
	size_t n_now = 0;

	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		bool seen = false;
		char **v;

		for (size_t i = 0; i < n->n_notes && !seen; i++)
			seen = strcmp(n->notes[i], line) == 0;
		if (!seen)
			klog_warning("pool status entry refused: the pool is left out of the node pool file",
				     "detail", line, NULL);
		v = realloc(now, (n_now + 1) * sizeof(*now));
		if (!v || !(v[n_now] = strdup(line))) {
			now = v ? v : now;
			break;
		}
		now = v;
		n_now++;
	}
	for (size_t i = 0; i < n->n_notes; i++)
		free(n->notes[i]);
	free(n->notes);
	n->notes = now;
	n->n_notes = n_now;
}

static void log_changes(const char *old, size_t old_len, const char *text)
{
	_cleanup_free_ char *lines = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&lines, &len);

	if (!f)
		return;
	nodefile_changes(old, old_len, text, f);
	if (fclose(f) != 0)
		return;
	for (char *save = NULL, *line = strtok_r(lines, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		klog_info(0, "node pool file changed", "change", line, NULL);
}

/* The pools of both kinds, each copy given its kind (list items may come without). */
static int gather(struct node *n, struct json_object ***ret, size_t *ret_n)
{
	struct json_object **all = NULL;
	size_t n_all = 0;

	for (int k = 0; k < METRICS_KINDS; k++) {
		struct json_object **v = NULL, **grown;
		size_t nv = 0;

		if (api_reflector_snapshot(n->refl[k], &v, &nv) < 0)
			goto oom;
		grown = realloc(all, (n_all + nv + 1) * sizeof(*all));
		if (!grown) {
			api_objects_free(v, nv);
			goto oom;
		}
		all = grown;
		for (size_t i = 0; i < nv; i++) {
			all[n_all++] = v[i];
			if (k8s_json_add_str(v[i], "kind", kind_names[k]) < 0) {
				for (size_t j = i + 1; j < nv; j++)
					json_object_put(v[j]);
				free(v);
				goto oom;
			}
		}
		free(v);
	}
	*ret = all;
	*ret_n = n_all;
	return 0;
oom:
	api_objects_free(all, n_all);
	return -ENOMEM;
}

/* A stop asked for: a render of a large pool set is not begun, nor its result written. */
static bool stopping(const struct node *n)
{
	struct pollfd pfd = { .fd = n->stop_fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

/* Told at the first sync and when the file changes: the gauge stays, the log names the pools. */
static void log_overlaps(const struct nvipam_pools *pools)
{
	struct overlap_blocks blocks = { 0 };
	struct overlap_result res = { 0 };

	if (overlap_blocks_from_node_pools(pools, &blocks) < 0)
		return;
	if (overlap_find(blocks.items, blocks.n, SIZE_MAX, &res) == 0) {
		for (size_t i = 0; i < res.n; i++) {
			const struct nvipam_pool *a = &pools->pools[res.pairs[i].a];
			const struct nvipam_pool *b = &pools->pools[res.pairs[i].b];

			klog_warning("the node's blocks of two pools overlap: one address may be handed out twice",
				     "pool", a->key, "block", blocks.texts[res.pairs[i].a], "other", b->key,
				     "otherBlock", blocks.texts[res.pairs[i].b], NULL);
		}
	}
	overlap_result_free(&res);
	overlap_blocks_free(&blocks);
}

static void sync_locked(struct node *n)
{
	_cleanup_free_ char *text = NULL, *old = NULL, *notes_text = NULL;
	struct json_object **objs = NULL;
	struct nvipam_pools pools = { 0 };
	struct k8s_objects view = { 0 };
	struct api_reflector_stats st;
	struct cni_err err = { 0 };
	size_t n_objs = 0, notes_len = 0, old_len = 0;
	const char *step = "";
	FILE *notes;
	bool written = false;
	int r, read_r;

	for (int k = 0; k < METRICS_KINDS; k++) {
		api_reflector_stats(n->refl[k], &st);
		if (!st.synced)
			return;
	}
	if (stopping(n))
		return;
	if (gather(n, &objs, &n_objs) < 0) {
		cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto failed;
	}
	view = (struct k8s_objects){ .items = objs, .n_items = n_objs };
	notes = open_memstream(&notes_text, &notes_len);
	if (!notes) {
		cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto failed;
	}
	r = nodefile_render(&view, n->flags->node_name, &text, notes, &err);
	if (fclose(notes) == 0 && notes_text)
		log_notes(n, notes_text);
	if (r < 0)
		goto failed;
	if (stopping(n)) {
		api_objects_free(objs, n_objs);
		return;
	}
	read_r = file_read(n->pool_file, POOL_FILE_MAX_BYTES, &old, &old_len);
	if (read_r < 0 || old_len != strlen(text) || memcmp(old, text, old_len) != 0) {
		r = file_make_parents(n->pool_file, 0755);
		step = "create directory";
		if (r >= 0)
			r = file_write_atomic(n->pool_file, text, strlen(text), 0644, &step);
		if (r < 0) {
			cni_err_set(&err, CNI_ERR_IO, r, "cannot write %s: %s: %s", n->pool_file, step,
				    strerror(-r));
			goto failed;
		}
		klog_info(0, read_r < 0 ? "node pool file written" : "node pool file updated", "file",
			  n->pool_file, NULL);
		log_changes(read_r < 0 ? NULL : old, old_len, text);
		written = true;
		pthread_mutex_lock(&n->metrics.lock);
		n->metrics.syncs++;
		pthread_mutex_unlock(&n->metrics.lock);
	}
	/* What nv-ipam reads gives the sizes: the file is known to load (nodefile_render()). */
	if (nvipam_pools_parse(text, strlen(text), n->pool_file, &pools, &err) == 0) {
		(void)metrics_set_pools(&n->metrics, &pools);
		/* Only syncs write ready, under n->sync_lock, which this holds. */
		if (written || !n->metrics.ready)
			log_overlaps(&pools);
		nvipam_pools_free(&pools);
	}
	pthread_mutex_lock(&n->metrics.lock);
	if (!n->metrics.ready)
		klog_info(0, "ready: the node pool file is in sync", "file", n->pool_file, NULL);
	n->metrics.ready = true;
	n->metrics.last_sync = time(NULL);
	pthread_mutex_unlock(&n->metrics.lock);
	__atomic_store_n(&n->sync_failed, false, __ATOMIC_RELAXED);
	api_objects_free(objs, n_objs);
	return;
failed:
	api_objects_free(objs, n_objs);
	pthread_mutex_lock(&n->metrics.lock);
	n->metrics.sync_errors++;
	pthread_mutex_unlock(&n->metrics.lock);
	klog_error(err.msg, "cannot sync the node pool file: trying again in a second", NULL);
	__atomic_store_n(&n->sync_failed, true, __ATOMIC_RELAXED);
}

void node_pools_sync(struct node *n)
{
	pthread_mutex_lock(&n->sync_lock);
	sync_locked(n);
	pthread_mutex_unlock(&n->sync_lock);
}

void node_pools_retry(struct node *n)
{
	if (pthread_mutex_trylock(&n->sync_lock) != 0)
		return;
	sync_locked(n);
	pthread_mutex_unlock(&n->sync_lock);
}
