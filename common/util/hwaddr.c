/* Hardware addresses as text: Ethernet (6 octets) and IPoIB (20 octets) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/util/hwaddr.h"
#include "common/util/text.h"

const char *hwaddr_format(const uint8_t *hwaddr, size_t len, char *buf, size_t size)
{
	size_t off = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < len; i++) {
		size_t n = i ? 3 : 2; /* colon and two digits */

		if (off + n + 1 > size)
			break;
		snprintf(buf + off, size - off, i ? ":%02x" : "%02x", hwaddr[i]);
		off += n;
	}
	return buf;
}

int hwaddr_parse(const char *s, uint8_t *ret, size_t *ret_len)
{
	uint8_t out[HWADDR_MAX];
	size_t n = 0;

	if (!s)
		return -EINVAL;
	for (;;) {
		int hi, lo;

		if (n == sizeof(out))
			return -EINVAL;
		hi = text_hex_digit(s[0]);
		lo = hi < 0 ? -1 : text_hex_digit(s[1]);
		if (lo < 0)
			return -EINVAL;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (*s == '\0')
			break;
		if (*s != ':')
			return -EINVAL;
		s++;
	}
	if (n != 6 && n != 20)
		return -EINVAL;
	memcpy(ret, out, n);
	*ret_len = n;
	return 0;
}
