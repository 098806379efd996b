/* IP addresses and prefixes: parse, format, compare */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util/ipaddr.h"

int ip_addr_parse(const char *s, struct ip_addr *ret)
{
	struct ip_addr a = { 0 };

	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, a.bytes) == 1)
		a.family = AF_INET;
	else if (inet_pton(AF_INET6, s, a.bytes) == 1)
		a.family = AF_INET6;
	else
		return -EINVAL;
	*ret = a;
	return 0;
}

int ip_addr_parse_unmapped(const char *s, struct ip_addr *ret)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ip_addr a;

	if (ip_addr_parse(s, &a) < 0)
		return -EINVAL;
	if (a.family == AF_INET6 && memcmp(a.bytes, mapped, sizeof(mapped)) == 0) {
		memmove(a.bytes, a.bytes + 12, 4);
		memset(a.bytes + 4, 0, 12);
		a.family = AF_INET;
	}
	*ret = a;
	return 0;
}

int ip_prefix_parse(const char *s, struct ip_prefix *ret)
{
	char buf[IP_PREFIX_STRLEN];
	struct ip_prefix p = { 0 };
	const char *slash;
	char *end;
	unsigned long len;
	size_t n;
	int r;

	if (!s)
		return -EINVAL;
	slash = strchr(s, '/');
	if (!slash)
		return -EINVAL;
	n = (size_t)(slash - s);
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	r = ip_addr_parse(buf, &p.addr);
	if (r < 0)
		return r;
	/* Digits only: strtoul would accept signs and leading spaces. */
	if (slash[1] < '0' || slash[1] > '9')
		return -EINVAL;
	errno = 0;
	len = strtoul(slash + 1, &end, 10);
	if (errno || *end || len > ip_addr_size(&p.addr) * 8 || end - (slash + 1) > 3)
		return -EINVAL;
	p.len = (unsigned int)len;
	*ret = p;
	return 0;
}

const char *ip_addr_format(const struct ip_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, a->bytes, buf, (socklen_t)len))
		snprintf(buf, len, "<none>");
	return buf;
}

const char *ip_prefix_format(const struct ip_prefix *p, char *buf, size_t len)
{
	char a[IP_PREFIX_STRLEN];

	snprintf(buf, len, "%s/%u", ip_addr_format(&p->addr, a, sizeof(a)), p->len);
	return buf;
}

size_t ip_addr_size(const struct ip_addr *a)
{
	switch (a->family) {
	case AF_INET:
		return 4;
	case AF_INET6:
		return 16;
	default:
		return 0;
	}
}

bool ip_addr_equal(const struct ip_addr *a, const struct ip_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, ip_addr_size(a)) == 0;
}

int ip_addr_cmp(const struct ip_addr *a, const struct ip_addr *b)
{
	/* AF_INET is below AF_INET6. */
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	return memcmp(a->bytes, b->bytes, ip_addr_size(a));
}

struct ip_prefix ip_prefix_network(const struct ip_prefix *p)
{
	struct ip_prefix n = *p;
	size_t size = ip_addr_size(&p->addr);

	for (size_t i = 0; i < size; i++) {
		unsigned int bit = (unsigned int)i * 8;

		if (bit >= p->len)
			n.addr.bytes[i] = 0;
		else if (bit + 8 > p->len)
			n.addr.bytes[i] &= (uint8_t)(0xff << (8 - (p->len - bit)));
	}
	return n;
}

bool ip_prefix_contains(const struct ip_prefix *p, const struct ip_addr *a)
{
	struct ip_prefix probe = { .addr = *a, .len = p->len };
	struct ip_prefix net = ip_prefix_network(p);
	struct ip_prefix other;

	if (a->family != p->addr.family)
		return false;
	other = ip_prefix_network(&probe);
	return ip_addr_equal(&net.addr, &other.addr);
}
