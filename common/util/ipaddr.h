/* IP addresses and prefixes: parse, format, compare */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Enough for an IPv6 address with a "/128" suffix and the terminator. */
#define IP_PREFIX_STRLEN 48

struct ip_addr {
	int family;        /* AF_INET or AF_INET6; 0 when unset */
	uint8_t bytes[16]; /* network order; IPv4 uses the first 4 */
};

struct ip_prefix {
	struct ip_addr addr; /* host bits are kept: "10.1.2.3/24" stays as is */
	unsigned int len;
};

/**
 * ip_addr_parse() - parse a bare IPv4 or IPv6 address
 * @s: text
 * @ret: parsed address, written only on success
 *
 * Return: 0 on success, -EINVAL when @s is not an address.
 */
int ip_addr_parse(const char *s, struct ip_addr *ret);

/**
 * ip_addr_parse_unmapped() - ip_addr_parse(), an IPv4-mapped IPv6 address read as IPv4
 * @s: text
 * @ret: parsed address, written only on success
 *
 * As Go's net.ParseIP() then To4(), which upstream's plugins use to tell the family.
 *
 * Return: 0 on success, -EINVAL when @s is not an address.
 */
int ip_addr_parse_unmapped(const char *s, struct ip_addr *ret);

/**
 * ip_prefix_parse() - parse "address/len"
 * @s: text
 * @ret: parsed prefix, written only on success
 *
 * Return: 0 on success, -EINVAL when @s is not a CIDR.
 */
int ip_prefix_parse(const char *s, struct ip_prefix *ret);

/**
 * ip_addr_format() - write an address as text
 * @a: address
 * @buf: output, at least IP_PREFIX_STRLEN bytes
 * @len: size of @buf
 *
 * Return: @buf.
 */
const char *ip_addr_format(const struct ip_addr *a, char *buf, size_t len);

/**
 * ip_prefix_format() - write a prefix as "address/len"
 * @p: prefix
 * @buf: output, at least IP_PREFIX_STRLEN bytes
 * @len: size of @buf
 *
 * Return: @buf.
 */
const char *ip_prefix_format(const struct ip_prefix *p, char *buf, size_t len);

/**
 * ip_addr_size() - address length in bytes for the family
 * @a: address
 *
 * Return: 4, 16, or 0 when unset.
 */
size_t ip_addr_size(const struct ip_addr *a);

/**
 * ip_addr_equal() - compare two addresses
 * @a: first
 * @b: second
 *
 * Return: true when family and bytes match.
 */
bool ip_addr_equal(const struct ip_addr *a, const struct ip_addr *b);

/**
 * ip_addr_cmp() - the order of addresses: IPv4 before IPv6, then by value
 * @a: first
 * @b: second
 *
 * Return: negative, 0 (ip_addr_equal()) or positive.
 */
int ip_addr_cmp(const struct ip_addr *a, const struct ip_addr *b);

/**
 * ip_prefix_network() - the prefix with its host bits cleared
 * @p: prefix
 *
 * Return: the network prefix.
 */
struct ip_prefix ip_prefix_network(const struct ip_prefix *p);

/**
 * ip_prefix_contains() - whether an address lies in a prefix
 * @p: prefix
 * @a: address
 *
 * Return: true when @a has the family of @p and matches its first len bits.
 */
bool ip_prefix_contains(const struct ip_prefix *p, const struct ip_addr *a);
