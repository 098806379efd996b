/* Hardware addresses as text: Ethernet (6 octets) and IPoIB (20 octets) */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define HWADDR_MAX 32 /* IPoIB uses 20 */

/**
 * hwaddr_format() - colon-separated lowercase hex text of an address
 * @hwaddr: bytes
 * @len: number of bytes
 * @buf: output
 * @size: size of @buf (3 * @len bytes suffice)
 *
 * Return: @buf.
 */
const char *hwaddr_format(const uint8_t *hwaddr, size_t len, char *buf, size_t size);

/**
 * hwaddr_parse() - parse colon-separated hex (6 or 20 octets)
 * @s: text
 * @ret: output bytes (HWADDR_MAX)
 * @ret_len: number of bytes, written only on success
 *
 * Return: 0 on success, -EINVAL on malformed text.
 */
int hwaddr_parse(const char *s, uint8_t *ret, size_t *ret_len);
