/* host-local's addresses: read, written and counted as upstream's Go net.IP does */
#pragma once

#include <stdint.h>

#include "common/util/ipaddr.h"

/* An address as text: the longest IPv6 form and the terminator. */
#define HL_IP_STRLEN 40

/* A CIDR as Go's net.ParseCIDR reads it: the address keeps its host bits. */
struct hl_cidr {
	struct ip_addr ip;  /* canonical: an IPv4-mapped IPv6 address is IPv4 */
	unsigned int ones;  /* the prefix length */
	unsigned int bits;  /* 32 or 128: the width of the mask the text gave */
};

/**
 * hl_ip_parse() - an address as Go's net.ParseIP and host-local's canonicalizeIP read it
 * @s: text
 * @ret: the address, written only on success; "::ffff:10.1.2.3" is IPv4 10.1.2.3
 *
 * Return: 0 on success, -EINVAL when @s is no address (zones and leading zeros included).
 */
int hl_ip_parse(const char *s, struct ip_addr *ret);

/**
 * hl_cidr_parse() - a CIDR as Go's net.ParseCIDR reads it
 * @s: text, "address/length" (the length in decimal digits, leading zeros allowed)
 * @ret: the CIDR, written only on success
 *
 * Return: 0 on success, -EINVAL when @s is no CIDR.
 */
int hl_cidr_parse(const char *s, struct hl_cidr *ret);

/**
 * hl_ip_format() - an address as Go's net.IP.String() writes it (RFC 5952 for IPv6,
 *                  never with a dotted IPv4 tail): the name of its file in the store
 * @a: address
 * @buf: output of HL_IP_STRLEN bytes
 *
 * Return: @buf.
 */
const char *hl_ip_format(const struct ip_addr *a, char buf[HL_IP_STRLEN]);

/**
 * hl_ip_cmp() - the order of two addresses of one family
 * @a: first
 * @b: second
 *
 * Return: -1, 0 or 1; -2 when their families differ (Go's ip.Cmp).
 */
int hl_ip_cmp(const struct ip_addr *a, const struct ip_addr *b);

/**
 * hl_ip_next() - the address after @a (wrapping at the family's end)
 * @a: address, changed in place
 */
void hl_ip_next(struct ip_addr *a);

/**
 * hl_ip_span() - how many addresses lie from @a to @b, both included
 * @a: first
 * @b: last, not below @a, of the same family
 *
 * Return: the count, UINT64_MAX when it is larger.
 */
uint64_t hl_ip_span(const struct ip_addr *a, const struct ip_addr *b);
