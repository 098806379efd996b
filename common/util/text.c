/* Text: UTF-8 decoding and escaping of untrusted strings for logs and messages */
#include <stdio.h>
#include <string.h>

#include "common/util/text.h"

size_t text_utf8_decode(const char *s, size_t n, uint32_t *ret_cp)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char c = p[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80) {
		len = 1;
		cp = c;
	} else if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	if (ret_cp)
		*ret_cp = cp;
	return len;
}

bool text_utf8_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t len = text_utf8_decode(s + i, n - i, NULL);

		if (!len)
			return false;
		i += len;
	}
	return true;
}

uint64_t text_hash64(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

size_t text_escape(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;

	if (size == 0)
		return 0;
	for (size_t i = 0; i < n;) {
		char esc[8];
		const char *piece = esc;
		size_t len = text_utf8_decode(s + i, n - i, NULL), plen;
		uint32_t cp = 0;

		if (len)
			text_utf8_decode(s + i, n - i, &cp);
		if (!len) {
			snprintf(esc, sizeof(esc), "\\x%02x", (unsigned char)s[i]);
			len = 1;
		} else if (cp == '\\') {
			piece = "\\\\";
		} else if (cp == '\n') {
			piece = "\\n";
		} else if (cp == '\r') {
			piece = "\\r";
		} else if (cp == '\t') {
			piece = "\\t";
		} else if (cp < 0x20 || cp == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", (unsigned int)cp);
		} else if (cp >= 0x80 && cp < 0xa0) {
			/* C1 controls: a terminal takes U+009B as CSI. */
			snprintf(esc, sizeof(esc), "\\u%04x", (unsigned int)cp);
		} else {
			piece = s + i;
		}
		plen = piece == s + i ? len : strlen(piece);
		if (o + plen >= size)
			break;
		memcpy(out + o, piece, plen);
		o += plen;
		i += len;
	}
	out[o] = '\0';
	return o;
}
