/* Address arithmetic on 128-bit integers, shared by the pool loader and the allocator */
#pragma once

#include <sys/socket.h>

#include "common/util/ipaddr.h"

/* An address as a number: IPv4 uses the low 32 bits, IPv6 all 128. */
__extension__ typedef unsigned __int128 ipmath_u128;

/**
 * ipmath_bits() - address width of a family
 * @family: AF_INET or AF_INET6
 *
 * Return: 32 or 128 (0 for anything else).
 */
static inline unsigned int ipmath_bits(int family)
{
	return family == AF_INET ? 32 : family == AF_INET6 ? 128 : 0;
}

/**
 * ipmath_from_addr() - an address as a number
 * @a: address
 *
 * Return: the value, big-endian bytes read most significant first.
 */
static inline ipmath_u128 ipmath_from_addr(const struct ip_addr *a)
{
	size_t size = ip_addr_size(a);
	ipmath_u128 v = 0;

	for (size_t i = 0; i < size; i++)
		v = (v << 8) | a->bytes[i];
	return v;
}

/**
 * ipmath_to_addr() - a number as an address of a family
 * @family: AF_INET or AF_INET6
 * @v: value (only the low 32 bits are used for IPv4)
 *
 * Return: the address.
 */
static inline struct ip_addr ipmath_to_addr(int family, ipmath_u128 v)
{
	struct ip_addr a = { .family = family };
	size_t size = ip_addr_size(&a);

	for (size_t i = size; i > 0; i--) {
		a.bytes[i - 1] = (uint8_t)(v & 0xff);
		v >>= 8;
	}
	return a;
}

/**
 * ipmath_host_mask() - the host part of a prefix length as a mask
 * @family: AF_INET or AF_INET6
 * @len: prefix length, at most ipmath_bits(@family)
 *
 * Return: a value with the low (bits - @len) bits set.
 */
static inline ipmath_u128 ipmath_host_mask(int family, unsigned int len)
{
	unsigned int host = ipmath_bits(family) - len;

	if (host >= 128)
		return ~(ipmath_u128)0;
	return ((ipmath_u128)1 << host) - 1;
}

/**
 * ipmath_max() - the highest address of a family
 * @family: AF_INET or AF_INET6
 *
 * Return: 255.255.255.255 or ffff:...:ffff as a number.
 */
static inline ipmath_u128 ipmath_max(int family)
{
	return ipmath_host_mask(family, 0);
}
