/* Picking addresses in a pool: round-robin, static, gateway, index (no I/O) */
#include <errno.h>
#include <limits.h>

#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/pool/ipmath.h"
#include "ipam/nv-ipam/pool/pool.h"

/*
 * The pool and its usage as numbers. Searches step over whole exclusions and over
 * reserved addresses one at a time, so their cost follows the number of exclusions
 * and reservations, never the size of the range (an IPv6 /64 has 2^64 addresses).
 */
struct view {
	const struct nvipam_pool *pool;
	int family;
	ipmath_u128 start;
	ipmath_u128 end;
	bool has_gateway;
	ipmath_u128 gateway;
	const struct ip_addr *reserved; /* the held addresses of the family, in order */
	size_t n_reserved;
	bool (*held)(void *ctx, const struct ip_addr *ip); /* and more, asked one by one */
	void *held_ctx;
};

static void view_base(struct view *v, const struct nvipam_pool *pool)
{
	*v = (struct view){
		.pool = pool,
		.family = pool->range.start.family,
		.start = ipmath_from_addr(&pool->range.start),
		.end = ipmath_from_addr(&pool->range.end),
		.has_gateway = pool->has_gateway && pool->gateway.family == pool->range.start.family,
		.gateway = ipmath_from_addr(&pool->gateway),
	};
}

/* The first index of @v (sorted, families in order) whose family is not below @family. */
static size_t family_start(const struct ip_addr *v, size_t n, int family)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].family < family)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The held addresses of the pool's family: a run of the sorted array. */
static void view_reserved(struct view *v, const struct nvipam_pool_usage *usage)
{
	size_t lo;

	if (usage) {
		v->held = usage->held;
		v->held_ctx = usage->held_ctx;
	}
	if (!usage || usage->n_reserved == 0)
		return;
	lo = family_start(usage->reserved, usage->n_reserved, v->family);
	v->reserved = usage->reserved + lo;
	v->n_reserved = family_start(usage->reserved, usage->n_reserved, v->family + 1) - lo;
}

static ipmath_u128 view_reserved_at(const struct view *v, size_t i)
{
	return ipmath_from_addr(&v->reserved[i]);
}

static bool view_is_reserved(const struct view *v, ipmath_u128 x)
{
	size_t lo = 0, hi = v->n_reserved;
	struct ip_addr ip;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		ipmath_u128 m = view_reserved_at(v, mid);

		if (m == x)
			return true;
		if (m < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!v->held)
		return false;
	ip = ipmath_to_addr(v->family, x);
	return v->held(v->held_ctx, &ip);
}

/*
 * Whether @x lies in an exclusion; if so @ret_last is the exclusion's last address.
 * The pool keeps its exclusions sorted and merged, so a binary search finds the one
 * candidate: the last exclusion starting at or before @x.
 */
static bool view_excluded(const struct view *v, ipmath_u128 x, ipmath_u128 *ret_last)
{
	const struct nvipam_pool *p = v->pool;
	size_t lo = 0, hi = p->n_exclusions;
	ipmath_u128 last;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ipmath_from_addr(&p->exclusions[mid].start) <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	last = ipmath_from_addr(&p->exclusions[lo - 1].end);
	if (last < x)
		return false;
	*ret_last = last;
	return true;
}

/* The first address in [@lo, @hi] that is not the gateway, excluded or reserved. */
static bool view_find_free(const struct view *v, ipmath_u128 lo, ipmath_u128 hi,
			   ipmath_u128 *ret)
{
	ipmath_u128 x = lo;

	if (lo > hi)
		return false;
	for (;;) {
		ipmath_u128 skip_to;

		/* x only moves forward, and never past @hi without returning. */
		if (!view_excluded(v, x, &skip_to)) {
			if (!(v->has_gateway && x == v->gateway) && !view_is_reserved(v, x))
				break;
			skip_to = x;
		}
		if (skip_to >= hi)
			return false;
		x = skip_to + 1;
	}
	*ret = x;
	return true;
}

/*
 * Whether nothing in the range can ever be handed out round-robin: every address is
 * excluded or the gateway. The reference controller never gives a node such a block, but a
 * status written before the exclusions changed can (until the controller moves the node).
 */
static bool view_all_excluded(const struct view *v)
{
	ipmath_u128 x = v->start;

	for (;;) {
		ipmath_u128 last = x; /* the gateway alone, unless an exclusion runs further */

		if (!view_excluded(v, x, &last) && !(v->has_gateway && x == v->gateway))
			return false;
		if (last >= v->end)
			return true;
		x = last + 1;
	}
}

static int pick_next(const struct view *v, const struct nvipam_pool_usage *usage,
		     ipmath_u128 *ret, struct cni_err *err)
{
	const struct nvipam_pool *p = v->pool;
	bool from_last = false, found;
	ipmath_u128 last = 0;

	/* Round-robin: after the last pick, wrapping around to it at the very end. A last
	 * pick at the range end, or outside the range (the config changed), starts over. */
	if (usage && usage->has_last && usage->last_reserved.family == v->family) {
		last = ipmath_from_addr(&usage->last_reserved);
		from_last = last >= v->start && last < v->end;
	}
	if (from_last)
		found = view_find_free(v, last + 1, v->end, ret) ||
			view_find_free(v, v->start, last, ret);
	else
		found = view_find_free(v, v->start, v->end, ret);
	if (found)
		return 0;
	if (view_all_excluded(v)) {
		char a[IP_PREFIX_STRLEN], b[IP_PREFIX_STRLEN];

		return cni_err_set(err, CNI_ERR_NO_FREE_ADDRESS, -ENOSPC,
				   "no free addresses in the pool \"%s\", poolType \"%s\": every "
				   "address of this node's range %s-%s is excluded or the gateway "
				   "(the controller gives such a node another block; until the "
				   "pool's status changes only static IPs are handed out)",
				   p->name, nvipam_pool_type_name(p->type),
				   ip_addr_format(&p->range.start, a, sizeof(a)),
				   ip_addr_format(&p->range.end, b, sizeof(b)));
	}
	return cni_err_set(err, CNI_ERR_NO_FREE_ADDRESS, -ENOSPC,
			   "no free addresses in the pool \"%s\", poolType \"%s\"", p->name,
			   nvipam_pool_type_name(p->type));
}

static int conflict(const struct nvipam_pool *p, struct cni_err *err)
{
	return cni_err_set(err, CNI_ERR_ADDRESS_TAKEN, -EEXIST,
			   "requested IP is already reserved in the pool \"%s\", poolType \"%s\"",
			   p->name, nvipam_pool_type_name(p->type));
}

/* Anywhere in the subnet, exclusions and gateway notwithstanding (as nv-ipam does). */
static int pick_static(const struct view *v, const struct ip_addr *ip, ipmath_u128 *ret,
		       struct cni_err *err)
{
	const struct nvipam_pool *p = v->pool;
	char a[IP_PREFIX_STRLEN], s[IP_PREFIX_STRLEN];

	if (!ip_prefix_contains(&p->subnet, ip))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "requested IP %s is outside the subnet %s of the pool \"%s\", "
				   "poolType \"%s\"", ip_addr_format(ip, a, sizeof(a)),
				   ip_prefix_format(&p->subnet, s, sizeof(s)), p->name,
				   nvipam_pool_type_name(p->type));
	*ret = ipmath_from_addr(ip);
	if (view_is_reserved(v, *ret))
		return conflict(p, err);
	return 0;
}

static int pick_gateway(const struct view *v, ipmath_u128 *ret, struct cni_err *err)
{
	const struct nvipam_pool *p = v->pool;

	if (!v->has_gateway)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "pool without gateway can't be used with allocate_default_gateway "
				   "feature, pool \"%s\", poolType \"%s\"", p->name,
				   nvipam_pool_type_name(p->type));
	if (view_is_reserved(v, v->gateway))
		return conflict(p, err);
	*ret = v->gateway;
	return 0;
}

/* The range start plus @index; for a CIDRPool that is network+1 (the whole prefix's
 * network for /31, /32, /127, /128), not the gatewayIndex base. */
static int pick_index(const struct view *v, unsigned long index, ipmath_u128 *ret,
		      struct cni_err *err)
{
	const struct nvipam_pool *p = v->pool;
	ipmath_u128 x;

	if ((ipmath_u128)index > ipmath_max(v->family) - v->start)
		goto outside;
	x = v->start + index;
	if (v->has_gateway && x == v->gateway)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "requested IP index \"%lu\" is the actual gateway, use "
				   "allocate_default_gateway feature instead", index);
	if (x > v->end)
		goto outside;
	if (view_is_reserved(v, x))
		return conflict(p, err);
	*ret = x;
	return 0;
outside:
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "requested IP index \"%lu\" is outside of the given chunk", index);
}

int nvipam_allocate(const struct nvipam_pool *pool, const struct nvipam_pool_usage *usage,
		    const struct nvipam_request *req, struct ip_addr *ret, struct cni_err *err)
{
	struct view v;
	ipmath_u128 x = 0;
	int r;

	view_base(&v, pool);
	view_reserved(&v, usage);
	switch (req->kind) {
	case NVIPAM_REQ_NEXT:
		r = pick_next(&v, usage, &x, err);
		break;
	case NVIPAM_REQ_STATIC:
		r = pick_static(&v, &req->ip, &x, err);
		break;
	case NVIPAM_REQ_GATEWAY:
		r = pick_gateway(&v, &x, err);
		break;
	case NVIPAM_REQ_INDEX:
		r = pick_index(&v, req->index, &x, err);
		break;
	default:
		r = cni_err_set(err, CNI_ERR_INTERNAL, -EINVAL, "unknown allocation request %d",
				(int)req->kind);
		break;
	}
	if (r < 0)
		return r;
	*ret = ipmath_to_addr(v.family, x);
	return 0;
}

/* A reserved address takes a round-robin slot only when round-robin could pick it. */
static bool view_takes_slot(const struct view *v, ipmath_u128 x)
{
	ipmath_u128 unused;

	return x >= v->start && x <= v->end && !(v->has_gateway && x == v->gateway) &&
	       !view_excluded(v, x, &unused);
}

unsigned long nvipam_pool_free_count(const struct nvipam_pool *pool,
				     const struct nvipam_pool_usage *usage)
{
	ipmath_u128 used = 0, size_minus_1, avail;
	struct view v;

	view_base(&v, pool);
	if (v.start > v.end)
		return 0;
	size_minus_1 = v.end - v.start;

	for (size_t i = 0; i < pool->n_exclusions; i++) {
		ipmath_u128 lo = ipmath_from_addr(&pool->exclusions[i].start);
		ipmath_u128 hi = ipmath_from_addr(&pool->exclusions[i].end);

		/* IPPool exclusions are kept unclipped: count only what overlaps the range. */
		if (hi < v.start || lo > v.end)
			continue;
		lo = lo < v.start ? v.start : lo;
		hi = hi > v.end ? v.end : hi;
		used += hi - lo + 1;
	}
	if (v.has_gateway && v.gateway >= v.start && v.gateway <= v.end) {
		ipmath_u128 unused;

		if (!view_excluded(&v, v.gateway, &unused))
			used++;
	}
	view_reserved(&v, usage);
	for (size_t i = 0; i < v.n_reserved; i++) {
		ipmath_u128 x = view_reserved_at(&v, i);

		if ((i == 0 || x != view_reserved_at(&v, i - 1)) && view_takes_slot(&v, x))
			used++;
	}

	/* The whole IPv6 space holds 2^128 addresses, one more than fits: no used slot
	 * means more free than any unsigned long anyway. */
	if (used == 0 && size_minus_1 == ipmath_max(AF_INET6))
		return ULONG_MAX;
	avail = size_minus_1 - (used - 1);
	return avail > ULONG_MAX ? ULONG_MAX : (unsigned long)avail;
}
