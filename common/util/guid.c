/* InfiniBand GUIDs as text: 8 colon-separated hex octets */
#include <errno.h>
#include <stdio.h>

#include "common/util/guid.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int guid_parse(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	if (!s)
		return -EINVAL;
	for (int i = 0; i < 8; i++, s += 3) {
		int hi = hex_digit(s[0]), lo = hi < 0 ? -1 : hex_digit(s[1]);

		/* strtoul would take signs, blanks and "0x": the text is exact or refused. */
		if (lo < 0 || s[2] != (i < 7 ? ':' : '\0'))
			return -EINVAL;
		v = v << 8 | (uint64_t)(hi << 4 | lo);
	}
	*ret = v;
	return 0;
}

const char *guid_format(uint64_t guid, char buf[GUID_TEXT_SIZE])
{
	snprintf(buf, GUID_TEXT_SIZE, "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x",
		 (unsigned int)(guid >> 56) & 0xff, (unsigned int)(guid >> 48) & 0xff,
		 (unsigned int)(guid >> 40) & 0xff, (unsigned int)(guid >> 32) & 0xff,
		 (unsigned int)(guid >> 24) & 0xff, (unsigned int)(guid >> 16) & 0xff,
		 (unsigned int)(guid >> 8) & 0xff, (unsigned int)guid & 0xff);
	return buf;
}
