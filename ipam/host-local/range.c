/* host-local's ranges and range sets: validation, membership and the order addresses are tried in */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util/error.h"
#include "ipam/host-local/range.h"

static struct ip_addr masked(const struct ip_addr *a, unsigned int ones)
{
	struct ip_prefix p = { .addr = *a, .len = ones };

	return ip_prefix_network(&p).addr;
}

/* Go's IPNet.String() of the subnet as the config gave it (canonicalized, host bits kept). */
static const char *subnet_format(const struct hl_cidr *c, char *buf, size_t size)
{
	char ip[HL_IP_STRLEN];
	unsigned int ones = c->ones;

	/* An IPv4 address under a 128-bit mask: Go prints the mask's last 32 bits. */
	if (c->ip.family == AF_INET && c->bits == 128)
		ones = ones > 96 ? ones - 96 : 0;
	snprintf(buf, size, "%s/%u", hl_ip_format(&c->ip, ip), ones);
	return buf;
}

/* Go's IPNet.Contains(): the family, and the bits under the mask. */
static bool subnet_contains(const struct ip_addr *net, unsigned int ones, const struct ip_addr *a)
{
	struct ip_addr m = masked(a, ones);

	return a->family == net->family && memcmp(m.bytes, net->bytes, ip_addr_size(a)) == 0;
}

/*
 * Upstream's Range.Contains() while the range is being canonicalized: @start and @end are
 * compared only when set, and only within a family (Go's ip.Cmp says -2 across them).
 */
static bool contains_partial(const struct ip_addr *net, unsigned int ones,
			     const struct ip_addr *start, const struct ip_addr *end,
			     const struct ip_addr *a)
{
	if (!subnet_contains(net, ones, a))
		return false;
	if (start && hl_ip_cmp(a, start) == -1)
		return false;
	if (end && hl_ip_cmp(a, end) == 1)
		return false;
	return true;
}

int hl_range_canonicalize(const struct hl_range_spec *spec, struct hl_range *ret,
			  struct cni_err *err)
{
	const struct hl_cidr *c = &spec->subnet;
	char sub[IP_PREFIX_STRLEN], ip[HL_IP_STRLEN], ip2[HL_IP_STRLEN];
	struct hl_range r = { .net = c->ip, .prefix_len = c->ones };
	struct ip_addr net;

	/* No address to hand out in a /31 or /32 (/127, /128). */
	if (c->ones > c->bits - 2)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "Network %s too small to allocate from",
				   subnet_format(c, sub, sizeof(sub)));
	if (c->ip.family == AF_INET && c->bits == 128)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "IPNet IP and Mask version mismatch");
	net = masked(&c->ip, c->ones);
	if (!ip_addr_equal(&net, &c->ip))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "Network has host bits set. For a subnet mask of length %u the "
				   "network address is %s", c->ones, hl_ip_format(&net, ip));
	if (spec->has_gateway) {
		r.gateway = spec->gateway;
	} else {
		r.gateway = net;
		hl_ip_next(&r.gateway);
	}
	if (spec->has_start) {
		r.start = spec->start;
		if (!contains_partial(&net, c->ones, &r.start, spec->has_end ? &spec->end : NULL,
				      &r.start))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "RangeStart %s not in network %s", hl_ip_format(&r.start, ip),
					   subnet_format(c, sub, sizeof(sub)));
	} else {
		r.start = net;
		hl_ip_next(&r.start);
	}
	if (spec->has_end) {
		r.end = spec->end;
		if (!contains_partial(&net, c->ones, &r.start, &r.end, &r.end))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "RangeEnd %s not in network %s", hl_ip_format(&r.end, ip),
					   subnet_format(c, sub, sizeof(sub)));
	} else {
		/* The last address of the subnet; for IPv4 the one before its broadcast address. */
		struct ip_prefix p = { .addr = net, .len = c->ones };

		r.end = net;
		for (size_t i = 0; i < ip_addr_size(&net); i++) {
			unsigned int bit = (unsigned int)i * 8;

			if (bit >= p.len)
				r.end.bytes[i] = 0xff;
			else if (bit + 8 > p.len)
				r.end.bytes[i] |= (uint8_t)(0xff >> (p.len - bit));
		}
		if (net.family == AF_INET)
			r.end.bytes[3]--;
		/*
		 * Upstream takes a rangeStart past this end (an IPv4 subnet's broadcast address)
		 * and then hands out that address and the ones after it, outside the subnet.
		 */
		if (hl_ip_cmp(&r.start, &r.end) > 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "RangeStart %s is after the last address of network %s, %s",
					   hl_ip_format(&r.start, ip), subnet_format(c, sub, sizeof(sub)),
					   hl_ip_format(&r.end, ip2));
	}
	*ret = r;
	return 0;
}

bool hl_range_contains(const struct hl_range *r, const struct ip_addr *a)
{
	return contains_partial(&r->net, r->prefix_len, &r->start, &r->end, a);
}

static bool ranges_overlap(const struct hl_range *a, const struct hl_range *b)
{
	if (a->start.family != b->start.family)
		return false;
	return hl_range_contains(a, &b->start) || hl_range_contains(a, &b->end) ||
	       hl_range_contains(b, &a->start) || hl_range_contains(b, &a->end);
}

static const char *range_format(const struct hl_range *r, char *buf, size_t size)
{
	char s[HL_IP_STRLEN], e[HL_IP_STRLEN];

	snprintf(buf, size, "%s-%s", hl_ip_format(&r->start, s), hl_ip_format(&r->end, e));
	return buf;
}

int hl_range_set_check(const struct hl_range_set *set, struct cni_err *err)
{
	char a[2 * HL_IP_STRLEN], b[2 * HL_IP_STRLEN];

	if (set->n == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "empty range set");
	for (size_t i = 1; i < set->n; i++)
		if (set->ranges[i].start.family != set->ranges[0].start.family)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "mixed address families");
	for (size_t i = 0; i + 1 < set->n; i++)
		for (size_t j = i + 1; j < set->n; j++)
			if (ranges_overlap(&set->ranges[i], &set->ranges[j]))
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "subnets %s and %s overlap",
						   range_format(&set->ranges[i], a, sizeof(a)),
						   range_format(&set->ranges[j], b, sizeof(b)));
	return 0;
}

const struct hl_range *hl_range_set_find(const struct hl_range_set *set, const struct ip_addr *a)
{
	for (size_t i = 0; i < set->n; i++)
		if (hl_range_contains(&set->ranges[i], a))
			return &set->ranges[i];
	return NULL;
}

bool hl_range_sets_overlap(const struct hl_range_set *a, const struct hl_range_set *b)
{
	for (size_t i = 0; i < a->n; i++)
		for (size_t j = 0; j < b->n; j++)
			if (ranges_overlap(&a->ranges[i], &b->ranges[j]))
				return true;
	return false;
}

const char *hl_range_set_format(const struct hl_range_set *set, char *buf, size_t size)
{
	char r[2 * HL_IP_STRLEN];
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < set->n && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? "," : "",
				      range_format(&set->ranges[i], r, sizeof(r)));
	return buf;
}

uint64_t hl_range_set_capacity(const struct hl_range_set *set)
{
	uint64_t total = 0;

	for (size_t i = 0; i < set->n; i++) {
		const struct hl_range *r = &set->ranges[i];
		uint64_t n = hl_ip_span(&r->start, &r->end);

		if (n != UINT64_MAX && hl_ip_cmp(&r->gateway, &r->start) >= 0 &&
		    hl_ip_cmp(&r->gateway, &r->end) <= 0)
			n--;
		if (n > UINT64_MAX - total)
			return UINT64_MAX;
		total += n;
	}
	return total;
}

void hl_iter_init(struct hl_iter *it, const struct hl_range_set *set, const struct ip_addr *last)
{
	*it = (struct hl_iter){ .set = set };
	/* The address after the last one reserved, when this set still holds it. */
	for (size_t i = 0; last && i < set->n; i++) {
		if (hl_range_contains(&set->ranges[i], last)) {
			it->range = i;
			it->cur = *last;
			it->started = true;
			return;
		}
	}
	it->first = set->ranges[0].start;
	it->has_first = true;
}

bool hl_iter_next(struct hl_iter *it, struct ip_addr *ret, const struct hl_range **ret_range)
{
	for (;;) {
		const struct hl_range *r = &it->set->ranges[it->range];

		if (!it->started) {
			it->cur = r->start;
			it->first = it->cur;
			it->has_first = true;
			it->started = true;
		} else {
			if (ip_addr_equal(&it->cur, &r->end)) {
				it->range = (it->range + 1) % it->set->n;
				r = &it->set->ranges[it->range];
				it->cur = r->start;
			} else {
				hl_ip_next(&it->cur);
			}
			if (!it->has_first) {
				it->first = it->cur;
				it->has_first = true;
			} else if (ip_addr_equal(&it->cur, &it->first)) {
				return false;
			}
		}
		if (ip_addr_equal(&it->cur, &r->gateway))
			continue;
		*ret = it->cur;
		*ret_range = r;
		return true;
	}
}
