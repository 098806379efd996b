/* host-local's ranges and range sets: validation, membership and the order addresses are tried in */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/ipaddr.h"
#include "ipam/host-local/ip.h"

struct cni_err;

/* A range as the config gives it, before upstream's Canonicalize(). */
struct hl_range_spec {
	struct hl_cidr subnet;
	bool has_start, has_end, has_gateway;
	struct ip_addr start, end, gateway;
};

/* A range as allocation sees it: every address set. */
struct hl_range {
	struct ip_addr net;       /* the subnet's network address */
	unsigned int prefix_len;
	struct ip_addr start;     /* first address handed out, included */
	struct ip_addr end;       /* last, included */
	struct ip_addr gateway;   /* never handed out when inside [start, end] */
};

struct hl_range_set {
	struct hl_range *ranges;
	size_t n;
};

/**
 * hl_range_canonicalize() - a range from its config, as upstream's Range.Canonicalize()
 * @spec: what the config gives
 * @ret: the range, written only on success
 * @err: code 7 with upstream's message ("Network 10.0.0.0/31 too small to allocate from",
 *       "RangeStart 10.1.0.1 not in network 10.0.0.0/24", ...)
 *
 * The gateway defaults to the subnet's first address, rangeStart to the address after
 * the network address, rangeEnd to the last (IPv4: the one before the broadcast address).
 *
 * Return: 0 on success, -EINVAL.
 */
int hl_range_canonicalize(const struct hl_range_spec *spec, struct hl_range *ret,
			  struct cni_err *err);

/**
 * hl_range_contains() - whether an address lies in a range's subnet, between start and end
 * @r: range
 * @a: address
 *
 * Return: true when it does.
 */
bool hl_range_contains(const struct hl_range *r, const struct ip_addr *a);

/**
 * hl_range_set_check() - upstream's RangeSet.Canonicalize() once each range is
 * @set: range set
 * @err: code 7 "empty range set", "mixed address families", "subnets A-B and C-D overlap"
 *
 * Return: 0 on success, -EINVAL.
 */
int hl_range_set_check(const struct hl_range_set *set, struct cni_err *err);

/**
 * hl_range_set_find() - the range of a set an address lies in
 * @set: range set
 * @a: address
 *
 * Return: the range, NULL when none holds @a.
 */
const struct hl_range *hl_range_set_find(const struct hl_range_set *set, const struct ip_addr *a);

/**
 * hl_range_sets_overlap() - whether a range of one set overlaps a range of the other
 * @a: first set
 * @b: second set
 *
 * Return: true when they do.
 */
bool hl_range_sets_overlap(const struct hl_range_set *a, const struct hl_range_set *b);

/**
 * hl_range_set_format() - a set as upstream's messages name it: "start-end,start-end"
 * @set: range set
 * @buf: output
 * @size: its size (the text is cut to fit)
 *
 * Return: @buf.
 */
const char *hl_range_set_format(const struct hl_range_set *set, char *buf, size_t size);

/**
 * hl_range_set_capacity() - how many addresses a set can hand out (its gateways left out)
 * @set: range set
 *
 * Return: the count, UINT64_MAX when it is larger.
 */
uint64_t hl_range_set_capacity(const struct hl_range_set *set);

/*
 * The order upstream tries a set's addresses in: round-robin from the address after
 * the last one reserved (when the set holds it), else from the first range's start;
 * each range from start to end, then the next range, wrapping; gateways skipped;
 * every address once.
 */
struct hl_iter {
	const struct hl_range_set *set;
	size_t range;
	bool started;            /* cur holds an address */
	bool has_first;
	struct ip_addr cur;
	struct ip_addr first;    /* the first address tried: reaching it again ends */
};

/**
 * hl_iter_init() - start iterating over a set
 * @it: iterator
 * @set: range set (not empty)
 * @last: the address reserved last in this set, NULL when none is known
 */
void hl_iter_init(struct hl_iter *it, const struct hl_range_set *set, const struct ip_addr *last);

/**
 * hl_iter_next() - the next address to try
 * @it: iterator
 * @ret: the address, written only when there is one
 * @ret_range: the range it lies in
 *
 * Return: true with an address, false when every address was tried.
 */
bool hl_iter_next(struct hl_iter *it, struct ip_addr *ret, const struct hl_range **ret_range);
