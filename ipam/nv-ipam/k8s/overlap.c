/*
 * Pools whose addresses overlap: IPPool subnets and CIDRPool cidrs, or a node's blocks
 *
 * Overlap can be meant (isolated rails reusing a subnet) or a mistake that gives one node
 * the same address from two pools. The controller's webhook and Events, ipam-node's gauge
 * and nv-ipam-tool check all ask this one finder.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/overlap.h"
#include "ipam/nv-ipam/pool/pool.h"

static int by_start(const void *x, const void *y, void *ctx)
{
	const struct overlap_item *items = ctx;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const struct overlap_item *a = &items[i], *b = &items[j];

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int by_pair(const void *x, const void *y)
{
	const struct overlap_pair *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

int overlap_find(const struct overlap_item *items, size_t n, size_t max_pairs,
		 struct overlap_result *ret)
{
	struct overlap_result res = { 0 };
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), cap = 0;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), by_start, (void *)items);
	/*
	 * In start order, a later item overlaps this one exactly when it starts inside it; the
	 * first that starts beyond ends the walk, as every later one starts further still.
	 */
	for (size_t i = 0; i < n && !res.truncated; i++) {
		const struct overlap_item *a = &items[idx[i]];

		for (size_t j = i + 1; j < n; j++) {
			const struct overlap_item *b = &items[idx[j]];

			if (b->family != a->family || b->lo > a->hi)
				break;
			if (res.n == max_pairs) {
				res.truncated = true;
				break;
			}
			if (res.n == cap) {
				size_t more = cap ? cap * 2 : 8;
				struct overlap_pair *v = realloc(res.pairs, more * sizeof(*v));

				if (!v) {
					free(idx);
					free(res.pairs);
					return -ENOMEM;
				}
				res.pairs = v;
				cap = more;
			}
			res.pairs[res.n].a = idx[i] < idx[j] ? idx[i] : idx[j];
			res.pairs[res.n].b = idx[i] < idx[j] ? idx[j] : idx[i];
			res.n++;
		}
	}
	free(idx);
	if (res.n)
		qsort(res.pairs, res.n, sizeof(*res.pairs), by_pair);
	*ret = res;
	return 0;
}

void overlap_result_free(struct overlap_result *r)
{
	if (!r)
		return;
	free(r->pairs);
	*r = (struct overlap_result){ 0 };
}

void overlap_describe(const struct overlap_item *a, const struct overlap_item *b, char *buf,
		      size_t size)
{
	char an[K8S_QUOTE_SIZE], at[K8S_QUOTE_SIZE], bn[K8S_QUOTE_SIZE], bt[K8S_QUOTE_SIZE];

	snprintf(buf, size, "%s \"%s\" %s overlaps %s \"%s\" %s", a->kind,
		 k8s_quote(a->name, an, sizeof(an)), k8s_quote(a->text, at, sizeof(at)), b->kind,
		 k8s_quote(b->name, bn, sizeof(bn)), k8s_quote(b->text, bt, sizeof(bt)));
}

int overlap_item_from_pool(struct json_object *obj, struct overlap_item *ret)
{
	const char *kind = k8s_object_kind(obj), *name = k8s_object_name(obj), *text;
	bool cidr = kind && strcmp(kind, "CIDRPool") == 0;
	struct json_object *v;
	struct ip_prefix p, net;
	ipmath_u128 host;

	/* A mirrored object without its kind (a list's item may lack it) is no pool here. */
	if (!cidr && (!kind || strcmp(kind, "IPPool") != 0))
		return -EINVAL;
	v = k8s_object_member(obj, "spec", cidr ? "cidr" : "subnet");
	if (!name || !*name || !json_object_is_type(v, json_type_string))
		return -EINVAL;
	text = json_object_get_string(v);
	if (ip_prefix_parse(text, &p) < 0)
		return -EINVAL;
	net = ip_prefix_network(&p);
	host = ipmath_host_mask(net.addr.family, net.len);
	*ret = (struct overlap_item){
		.kind = cidr ? "CIDRPool" : "IPPool",
		.name = name,
		.text = text,
		.family = net.addr.family,
		.lo = ipmath_from_addr(&net.addr),
		.hi = ipmath_from_addr(&net.addr) | host,
	};
	return 0;
}

int overlap_items_from_pools(struct json_object *const *objs, size_t n, struct overlap_item **ret,
			     size_t **ret_idx, size_t *ret_n)
{
	struct overlap_item *items = malloc((n ? n : 1) * sizeof(*items));
	size_t *idx = ret_idx ? malloc((n ? n : 1) * sizeof(*idx)) : NULL;
	size_t m = 0;

	if (!items || (ret_idx && !idx)) {
		free(items);
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (overlap_item_from_pool(objs[i], &items[m]) < 0)
			continue;
		if (idx)
			idx[m] = i;
		m++;
	}
	*ret = items;
	if (ret_idx)
		*ret_idx = idx;
	*ret_n = m;
	return 0;
}

int overlap_blocks_from_node_pools(const struct nvipam_pools *pools, struct overlap_blocks *ret)
{
	struct overlap_blocks b = {
		.items = malloc((pools->n ? pools->n : 1) * sizeof(*b.items)),
		.texts = malloc((pools->n ? pools->n : 1) * sizeof(*b.texts)),
		.n = pools->n,
	};

	if (!b.items || !b.texts) {
		overlap_blocks_free(&b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < pools->n; i++) {
		const struct nvipam_pool *p = &pools->pools[i];
		char x[IP_PREFIX_STRLEN], y[IP_PREFIX_STRLEN];

		snprintf(b.texts[i], sizeof(b.texts[i]), "%s-%s",
			 ip_addr_format(&p->range.start, x, sizeof(x)),
			 ip_addr_format(&p->range.end, y, sizeof(y)));
		b.items[i] = (struct overlap_item){
			.kind = p->type == NVIPAM_POOL_CIDRPOOL ? "CIDRPool" : "IPPool",
			.name = p->name,
			.text = b.texts[i],
			.family = p->range.start.family,
			.lo = ipmath_from_addr(&p->range.start),
			.hi = ipmath_from_addr(&p->range.end),
		};
	}
	*ret = b;
	return 0;
}

void overlap_blocks_free(struct overlap_blocks *b)
{
	if (!b)
		return;
	free(b->items);
	free(b->texts);
	*b = (struct overlap_blocks){ 0 };
}
