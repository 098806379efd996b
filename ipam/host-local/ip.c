/* host-local's addresses: read, written and counted as upstream's Go net.IP does */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "ipam/host-local/ip.h"

static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

/* Go's To4(): an IPv4-mapped IPv6 address is the IPv4 address it maps. */
static void canonicalize(struct ip_addr *a)
{
	if (a->family != AF_INET6 || memcmp(a->bytes, v4_mapped, sizeof(v4_mapped)) != 0)
		return;
	memmove(a->bytes, a->bytes + 12, 4);
	memset(a->bytes + 4, 0, 12);
	a->family = AF_INET;
}

int hl_ip_parse(const char *s, struct ip_addr *ret)
{
	struct ip_addr a;

	/* inet_pton() refuses what Go refuses: leading zeros, zones, short forms. */
	if (ip_addr_parse(s, &a) < 0)
		return -EINVAL;
	canonicalize(&a);
	*ret = a;
	return 0;
}

int hl_cidr_parse(const char *s, struct hl_cidr *ret)
{
	char addr[64];
	const char *slash = strchr(s, '/');
	struct hl_cidr c = { 0 };
	unsigned long len = 0;
	const char *p;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return -EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (ip_addr_parse(addr, &c.ip) < 0)
		return -EINVAL;
	c.bits = c.ip.family == AF_INET ? 32 : 128;
	/* Go's dtoi: decimal digits, leading zeros and all. */
	for (p = slash + 1; *p >= '0' && *p <= '9'; p++) {
		len = len * 10 + (unsigned long)(*p - '0');
		if (len > c.bits)
			return -EINVAL;
	}
	if (p == slash + 1 || *p)
		return -EINVAL;
	c.ones = (unsigned int)len;
	canonicalize(&c.ip);
	*ret = c;
	return 0;
}

const char *hl_ip_format(const struct ip_addr *a, char buf[HL_IP_STRLEN])
{
	unsigned int w[8];
	int best = -1, best_len = 0;
	size_t o = 0;

	if (a->family == AF_INET) {
		snprintf(buf, HL_IP_STRLEN, "%u.%u.%u.%u", a->bytes[0], a->bytes[1], a->bytes[2],
			 a->bytes[3]);
		return buf;
	}
	for (int i = 0; i < 8; i++)
		w[i] = (unsigned int)a->bytes[2 * i] << 8 | a->bytes[2 * i + 1];
	/* RFC 5952: the first longest run of two or more zero groups becomes "::". */
	for (int i = 0; i < 8;) {
		int j = i;

		while (j < 8 && w[j] == 0)
			j++;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			o += (size_t)snprintf(buf + o, HL_IP_STRLEN - o, "::");
			i += best_len - 1;
			continue;
		}
		o += (size_t)snprintf(buf + o, HL_IP_STRLEN - o, "%s%x",
				      i && i != best + best_len ? ":" : "", w[i]);
	}
	return buf;
}

int hl_ip_cmp(const struct ip_addr *a, const struct ip_addr *b)
{
	int r;

	if (a->family != b->family)
		return -2;
	r = memcmp(a->bytes, b->bytes, ip_addr_size(a));
	return (r > 0) - (r < 0);
}

void hl_ip_next(struct ip_addr *a)
{
	for (size_t i = ip_addr_size(a); i-- > 0;)
		if (++a->bytes[i] != 0)
			break;
}

uint64_t hl_ip_span(const struct ip_addr *a, const struct ip_addr *b)
{
	size_t size = ip_addr_size(a);
	uint64_t hi_a = 0, hi_b = 0, lo_a = 0, lo_b = 0;

	/* 128 bits as two halves; IPv4 fits in the low one. */
	for (size_t i = 0; i < size; i++) {
		bool low = size - i <= 8;

		if (low) {
			lo_a = lo_a << 8 | a->bytes[i];
			lo_b = lo_b << 8 | b->bytes[i];
		} else {
			hi_a = hi_a << 8 | a->bytes[i];
			hi_b = hi_b << 8 | b->bytes[i];
		}
	}
	if (hi_b - hi_a - (lo_b < lo_a) != 0 || lo_b - lo_a == UINT64_MAX)
		return UINT64_MAX;
	return lo_b - lo_a + 1;
}
