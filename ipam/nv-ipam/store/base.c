/* A pool's snapshot read as the model goes: its records copied in as lookups find them */
#include <errno.h>
#include <string.h>

#include "common/util/error.h"
#include "ipam/nv-ipam/store/base.h"
#include "ipam/nv-ipam/store/load.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/snap.h"

struct pull {
	struct nvipam_store *s;
	struct store_pool *p;
	int r;
};

static void pull_one(size_t i, void *ctx)
{
	struct pull *w = ctx;
	struct store_base *b = w->p->disk->base;

	if (w->r < 0 || store_base_gone(b, i))
		return;
	w->r = store_model_reserve(w->s, 1);
	if (w->r < 0)
		return;
	w->r = store_snap_record(&b->snap, i, w->p->key, &w->s->allocs[w->s->n_allocs]);
	if (w->r < 0)
		return;
	w->s->n_allocs++;
	store_base_take(b, i);
}

/* A block of @p's snapshot damaged: the pool read again from its log; a failure kept for commit. */
static int damaged(struct nvipam_store *s, struct store_pool *p)
{
	struct cni_err err = { 0 };
	int r = store_load_again(s, (size_t)(p - s->pools), &err);

	if (r < 0 && !s->fault) {
		s->fault = r;
		s->fault_err = err;
	}
	return r;
}

/* After a lookup through pull_one(): the damage handled, or the lookup's error. */
static int pulled(struct pull *w, int r)
{
	if (r == -EIO || w->r == -EIO)
		return damaged(w->s, w->p);
	return w->r;
}

int store_base_pull_key(struct nvipam_store *s, struct store_pool *p, const char *container_id,
			const char *ifname)
{
	struct pull w = { s, p, 0 };

	if (!p->disk->base)
		return 0;
	return pulled(&w, store_snap_find_key(&p->disk->base->snap, container_id, ifname, pull_one, &w));
}

int store_base_pull_pod(struct nvipam_store *s, struct store_pool *p, const char *pod_uid,
			const char *ifname)
{
	struct pull w = { s, p, 0 };

	if (!p->disk->base)
		return 0;
	return pulled(&w, store_snap_find_pod(&p->disk->base->snap, pod_uid, ifname, pull_one, &w));
}

int store_base_pull_all(struct nvipam_store *s, struct store_pool *p)
{
	struct pull w = { s, p, 0 };
	struct store_base *b = p->disk->base;

	if (!b)
		return 0;
	/* Room for all at once: one allocation, not one doubling after another. */
	w.r = store_model_reserve(s, b->live);
	for (size_t i = 0; w.r >= 0 && i < b->snap.n_records; i++)
		pull_one(i, &w);
	return pulled(&w, 0);
}

bool store_base_held(struct nvipam_store *s, struct store_pool *p, const struct ip_addr *ip)
{
	struct store_base *b = p->disk->base;
	long i = -1;

	for (size_t k = 0; k < s->n_allocs; k++)
		if (s->allocs[k].a.pool == p->key && ip_addr_equal(&s->allocs[k].a.ip, ip))
			return true;
	if (!b)
		return s->fault != 0;
	if (store_snap_find_ip(&b->snap, ip, &i) < 0)
		/* Read again, the model holds the pool whole: asked once more, it answers. */
		return damaged(s, p) < 0 || store_base_held(s, p, ip);
	return i >= 0 && !store_base_gone(b, (size_t)i);
}

int store_base_ips(struct nvipam_store *s, struct store_pool *p, struct ip_addr *out, size_t *ret_n)
{
	struct store_base *b = p->disk->base;
	size_t n = 0;
	int r;

	*ret_n = 0;
	for (size_t i = 0; b && i < b->snap.n_records; i++) {
		if (store_base_gone(b, i))
			continue;
		if (store_snap_ip(&b->snap, i, &out[n]) < 0) {
			r = damaged(s, p);
			return r < 0 ? r : -ESTALE;
		}
		n++;
	}
	*ret_n = n;
	return 0;
}
