/* ipam-node's numbers, kept for /metrics and written in Prometheus' text format */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/cleanup.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/daemon/prom.h"
#include "ipam/nv-ipam/gc/run.h"
#include "ipam/nv-ipam/k8s/overlap.h"
#include "ipam/nv-ipam/node/metrics.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/serve/http.h"

int metrics_init(struct metrics *m)
{
	*m = (struct metrics){ .started = time(NULL) };
	return pthread_mutex_init(&m->lock, NULL) == 0 ? 0 : -ENOMEM;
}

void metrics_free(struct metrics *m)
{
	for (size_t i = 0; i < m->n_pools; i++)
		free(m->pools[i].key);
	free(m->pools);
	pthread_mutex_destroy(&m->lock);
}

unsigned long long metrics_pool_size(const struct nvipam_pools *pools, const char *key)
{
	const struct nvipam_pool *p = nvipam_pools_find(pools, key);
	ipmath_u128 lo, hi, n, gw;
	bool gw_excluded = false;

	if (!p)
		return 0;
	lo = ipmath_from_addr(&p->range.start);
	hi = ipmath_from_addr(&p->range.end);
	n = hi - lo + 1;
	gw = p->has_gateway ? ipmath_from_addr(&p->gateway) : 0;
	/* Exclusions are merged and sorted by the loader: no address is counted twice. */
	for (size_t i = 0; i < p->n_exclusions; i++) {
		ipmath_u128 a = ipmath_from_addr(&p->exclusions[i].start);
		ipmath_u128 b = ipmath_from_addr(&p->exclusions[i].end);

		if (a < lo)
			a = lo;
		if (b > hi)
			b = hi;
		if (a <= b)
			n -= b - a + 1;
		gw_excluded |= p->has_gateway && gw >= a && gw <= b;
	}
	if (p->has_gateway && gw >= lo && gw <= hi && !gw_excluded)
		n--;
	return n > (ipmath_u128)~0ULL ? ~0ULL : (unsigned long long)n;
}

/* The pool of @key, added (zeroed) when missing; called with the lock held. */
static struct metrics_pool *pool_get(struct metrics *m, const char *key)
{
	size_t i = 0;
	struct metrics_pool *v;
	char *k;

	while (i < m->n_pools && strcmp(m->pools[i].key, key) < 0)
		i++;
	if (i < m->n_pools && strcmp(m->pools[i].key, key) == 0)
		return &m->pools[i];
	v = realloc(m->pools, (m->n_pools + 1) * sizeof(*v));
	if (!v)
		return NULL;
	m->pools = v;
	k = strdup(key);
	if (!k)
		return NULL;
	memmove(&v[i + 1], &v[i], (m->n_pools - i) * sizeof(*v));
	v[i] = (struct metrics_pool){ .key = k };
	m->n_pools++;
	return &v[i];
}

/* Pools neither in the file nor holding anything leave the metrics. */
static void pools_prune(struct metrics *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n_pools; i++) {
		if (!m->pools[i].in_file && !m->pools[i].allocated) {
			free(m->pools[i].key);
			continue;
		}
		m->pools[k++] = m->pools[i];
	}
	m->n_pools = k;
}

static int set_pools(struct metrics *m, const struct nvipam_pools *pools,
		     const struct overlap_result *overlaps)
{
	int r = 0;

	pthread_mutex_lock(&m->lock);
	/* A pool that left the file hands out nothing more, though its holders remain. */
	for (size_t i = 0; i < m->n_pools; i++) {
		m->pools[i].in_file = false;
		m->pools[i].size = 0;
		m->pools[i].overlapping = 0;
	}
	for (size_t i = 0; i < pools->n; i++) {
		struct metrics_pool *p = pool_get(m, pools->pools[i].key);

		if (!p) {
			r = -ENOMEM;
			break;
		}
		p->in_file = true;
		p->size = metrics_pool_size(pools, pools->pools[i].key);
	}
	for (size_t i = 0; r == 0 && i < overlaps->n; i++) {
		struct metrics_pool *a = pool_get(m, pools->pools[overlaps->pairs[i].a].key);
		struct metrics_pool *b = pool_get(m, pools->pools[overlaps->pairs[i].b].key);

		if (a)
			a->overlapping++;
		if (b)
			b->overlapping++;
	}
	pools_prune(m);
	pthread_mutex_unlock(&m->lock);
	return r;
}

int metrics_set_pools(struct metrics *m, const struct nvipam_pools *pools)
{
	struct overlap_blocks blocks = { 0 };
	struct overlap_result res = { 0 };
	int r;

	r = overlap_blocks_from_node_pools(pools, &blocks);
	/* A node has a few pools: every pair is counted. */
	r = r ? r : overlap_find(blocks.items, blocks.n, SIZE_MAX, &res);
	overlap_blocks_free(&blocks);
	if (r)
		return r;
	r = set_pools(m, pools, &res);
	overlap_result_free(&res);
	return r;
}

int metrics_set_usage(struct metrics *m, const struct gc_result *res)
{
	int r = 0;

	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->n_pools; i++)
		m->pools[i].allocated = m->pools[i].stale = 0;
	for (size_t i = 0; i < res->n_pools; i++) {
		const struct gc_pool_count *c = &res->pools[i];
		struct metrics_pool *p = pool_get(m, c->pool);

		if (!p) {
			r = -ENOMEM;
			break;
		}
		p->allocated = c->allocated;
		p->stale = c->missed;
		p->released += c->released;
	}
	pools_prune(m);
	pthread_mutex_unlock(&m->lock);
	return r;
}

static void sample_u(struct text_buf *b, const char *name, const struct metrics_pool *p,
		     unsigned long long v)
{
	char num[32];
	bool cidr = strncmp(p->key, "cidrpool/", 9) == 0;

	text_buf_puts(b, name);
	text_buf_putc(b, '{');
	prom_label(b, "pool", cidr ? p->key + 9 : p->key);
	text_buf_putc(b, ',');
	prom_label(b, "type", cidr ? "cidrpool" : "ippool");
	snprintf(num, sizeof(num), "} %llu\n", v);
	text_buf_puts(b, num);
}

void metrics_set_servers(struct metrics *m, struct serve *probes, struct serve *metrics_srv)
{
	pthread_mutex_lock(&m->lock);
	m->servers[0] = probes;
	m->servers[1] = metrics_srv;
	pthread_mutex_unlock(&m->lock);
}

int metrics_render(struct metrics *m, char **ret, size_t *ret_len)
{
	static const char *const kinds[METRICS_KINDS] = { "ippools", "cidrpools" };
	struct text_buf b = { 0 };
	char labels[64];

	pthread_mutex_lock(&m->lock);
	prom_family(&b, "nv_ipam_node_pool_size", "gauge",
	            "Addresses this node hands out from the pool: its block less exclusions and the gateway.");
	for (size_t i = 0; i < m->n_pools; i++)
		sample_u(&b, "nv_ipam_node_pool_size", &m->pools[i], m->pools[i].size);
	prom_family(&b, "nv_ipam_node_pool_allocated", "gauge",
	            "Addresses of the pool held in this node's store, as of the last clean pass.");
	for (size_t i = 0; i < m->n_pools; i++)
		sample_u(&b, "nv_ipam_node_pool_allocated", &m->pools[i], m->pools[i].allocated);
	prom_family(&b, "nv_ipam_node_pool_free", "gauge",
	            "Size less allocated (an address given outside the block counts against it too).");
	for (size_t i = 0; i < m->n_pools; i++)
		sample_u(&b, "nv_ipam_node_pool_free", &m->pools[i],
			 m->pools[i].size > m->pools[i].allocated ? m->pools[i].size - m->pools[i].allocated : 0);
	prom_family(&b, "nv_ipam_node_pool_overlapping", "gauge",
	            "Other pools of the node pool file whose block shares addresses with this pool's "
	       "(the node may hand out one address twice).");
	for (size_t i = 0; i < m->n_pools; i++)
		if (m->pools[i].in_file)
			sample_u(&b, "nv_ipam_node_pool_overlapping", &m->pools[i], m->pools[i].overlapping);
	prom_family(&b, "nv_ipam_node_pool_stale", "gauge",
	            "Addresses held by a pod that is gone from the API, not yet released.");
	for (size_t i = 0; i < m->n_pools; i++)
		sample_u(&b, "nv_ipam_node_pool_stale", &m->pools[i], m->pools[i].stale);
	prom_family(&b, "nv_ipam_node_cleaner_released_total", "counter",
	            "Addresses the cleaner released because their pod was gone.");
	for (size_t i = 0; i < m->n_pools; i++)
		sample_u(&b, "nv_ipam_node_cleaner_released_total", &m->pools[i], m->pools[i].released);
	prom_family(&b, "nv_ipam_node_cleaner_runs_total", "counter", "Clean passes, by result.");
	prom_sample(&b, "nv_ipam_node_cleaner_runs_total", "{result=\"ok\"}", (double)m->clean_runs);
	prom_sample(&b, "nv_ipam_node_cleaner_runs_total", "{result=\"failed\"}", (double)m->clean_failures);
	prom_family(&b, "nv_ipam_node_cleaner_last_run_timestamp_seconds", "gauge",
	            "When a clean pass last completed (0: never).");
	prom_sample(&b, "nv_ipam_node_cleaner_last_run_timestamp_seconds", "", (double)m->last_clean);
	prom_family(&b, "nv_ipam_node_pool_sync_writes_total", "counter", "Rewrites of the node pool file.");
	prom_sample(&b, "nv_ipam_node_pool_sync_writes_total", "", (double)m->syncs);
	prom_family(&b, "nv_ipam_node_pool_sync_errors_total", "counter",
	            "Syncs that could not write the node pool file.");
	prom_sample(&b, "nv_ipam_node_pool_sync_errors_total", "", (double)m->sync_errors);
	prom_family(&b, "nv_ipam_node_pool_sync_last_timestamp_seconds", "gauge",
	            "When the node pool file last matched the API's pools (0: never).");
	prom_sample(&b, "nv_ipam_node_pool_sync_last_timestamp_seconds", "", (double)m->last_sync);
	prom_family(&b, "nv_ipam_node_watch_restarts_total", "counter",
	            "Watches of the pools that broke off or could not start.");
	for (int k = 0; k < METRICS_KINDS; k++) {
		snprintf(labels, sizeof(labels), "{resource=\"%s\"}", kinds[k]);
		prom_sample(&b, "nv_ipam_node_watch_restarts_total", labels, (double)m->watch_restarts[k]);
	}
	prom_family(&b, "nv_ipam_node_watch_relists_total", "counter",
	            "Lists of the pools forced by a watch whose version was gone (410).");
	for (int k = 0; k < METRICS_KINDS; k++) {
		snprintf(labels, sizeof(labels), "{resource=\"%s\"}", kinds[k]);
		prom_sample(&b, "nv_ipam_node_watch_relists_total", labels, (double)m->relists[k]);
	}
	prom_family(&b, "nv_ipam_node_ready", "gauge", "1 once the first node pool file sync is written.");
	prom_sample(&b, "nv_ipam_node_ready", "", m->ready ? 1 : 0);
	{
		struct prom_server srv[2] = { { .name = "probes" }, { .name = "metrics" } };

		for (int i = 0; i < 2; i++) {
			srv[i].up = m->servers[i];
			serve_connections(m->servers[i], &srv[i].st);
		}
		prom_connections(&b, "nv_ipam_node", srv, 2);
	}
	prom_process(&b, m->started);
	pthread_mutex_unlock(&m->lock);
	text_buf_putc(&b, '\0');
	if (b.oom) {
		text_buf_free(&b);
		return -ENOMEM;
	}
	*ret = b.data;
	*ret_len = b.len - 1;
	return 0;
}
