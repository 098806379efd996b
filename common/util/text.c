/* Text: UTF-8, escaping of untrusted strings, JSON strings, growable buffers, hashes */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

char *text_utf8_scrub(const char *s, size_t n, size_t *ret_len)
{
	char *v = malloc(n * 3 + 1);
	size_t o = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = text_utf8_decode(s + i, n - i, NULL);

		/* One byte at a time, as Go's utf8.DecodeRune gives up on it. */
		if (len == 0) {
			memcpy(v + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(v + o, s + i, len);
		o += len;
		i += len;
	}
	v[o] = '\0';
	*ret_len = o;
	return v;
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

int text_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* @n hex digits at @s as a number, or -1. */
static long hex_value(const char *s, size_t n)
{
	long v = 0;

	for (size_t i = 0; i < n; i++) {
		int d = text_hex_digit(s[i]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static size_t utf8_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int text_unescape(char *s, size_t n, size_t *ret_len)
{
	size_t i = 0, o;

	/* Most text needs nothing done: printable ASCII without a backslash. */
	while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f && s[i] != '\\')
		i++;
	for (o = i; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len;
		long v;

		if (c != '\\') {
			if (c < 0x20 || c == 0x7f)
				return -EINVAL;
			len = c < 0x80 ? 1 : text_utf8_decode(s + i, n - i, NULL);
			if (!len)
				return -EINVAL;
			while (len--)
				s[o++] = s[i++];
			continue;
		}
		if (i + 1 >= n)
			return -EINVAL;
		switch (s[i + 1]) {
		case '\\':
			s[o++] = '\\';
			i += 2;
			continue;
		case 'n':
			s[o++] = '\n';
			i += 2;
			continue;
		case 'r':
			s[o++] = '\r';
			i += 2;
			continue;
		case 't':
			s[o++] = '\t';
			i += 2;
			continue;
		case 'x':
			v = n - i >= 4 ? hex_value(s + i + 2, 2) : -1;
			if (v <= 0)
				return -EINVAL;
			s[o++] = (char)v;
			i += 4;
			continue;
		case 'u':
			v = n - i >= 6 ? hex_value(s + i + 2, 4) : -1;
			if (v <= 0 || (v >= 0xd800 && v <= 0xdfff))
				return -EINVAL;
			/* Never longer than the six characters it replaces. */
			o += utf8_encode((uint32_t)v, s + o);
			i += 6;
			continue;
		default:
			return -EINVAL;
		}
	}
	if (o < n)
		s[o] = '\0';
	*ret_len = o;
	return 0;
}

uint32_t text_hash32(const void *data, size_t len, uint32_t h)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

/* A 64-bit finaliser that spreads every input bit over the whole word (splitmix64's). */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t text_checksum64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
	size_t i = 0;

	/* One multiply per word, not per byte: FNV-1a's chain is the cost on long input. */
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	w = 0;
	for (size_t k = 0; i + k < len; k++)
		w |= (uint64_t)p[i + k] << (8 * k);
	return mix64(h ^ w);
}

void text_buf_reserve(struct text_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom || b->len + more <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + more)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return;
	}
	b->data = p;
	b->cap = cap;
}

void text_buf_add(struct text_buf *b, const void *s, size_t n)
{
	text_buf_reserve(b, n);
	if (b->oom)
		return;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
}

void text_buf_puts(struct text_buf *b, const char *s)
{
	text_buf_add(b, s, strlen(s));
}

void text_buf_putc(struct text_buf *b, char c)
{
	text_buf_add(b, &c, 1);
}

void text_buf_put_escaped(struct text_buf *b, const char *s, size_t n)
{
	/* An escape is at most four bytes per byte it stands for (\xNN). */
	text_buf_reserve(b, 4 * n + 1);
	if (b->oom)
		return;
	b->len += text_escape(s, n, b->data + b->len, 4 * n + 1);
}

/*
 * Bytes that stand for themselves inside a JSON string: bit 0 for the plain style
 * (printable ASCII but '"' and '\\'), bit 1 for Go's, which also escapes '<', '>' and '&'.
 */
#define ROW3 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3
static const unsigned char json_plain_byte[256] = {
	[0x20] = 3, 3, 0, 3, 3, 3, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* '"' 0x22, '&' 0x26 */
	[0x30] = 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 3, 1, 3, /* '<' 0x3c, '>' 0x3e */
	[0x40] = ROW3,
	[0x50] = 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 3, 3, 3, /* '\\' 0x5c */
	[0x60] = ROW3,
	[0x70] = 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	/* control characters and non-ASCII bytes: 0 */
};
#undef ROW3

void text_buf_put_json_str(struct text_buf *b, const char *s, enum text_json_style style)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	unsigned char mask = style == TEXT_JSON_GO ? 2 : 1;
	bool go = style == TEXT_JSON_GO;
	size_t n = strlen(s);

	text_buf_reserve(b, n + 2);
	text_buf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		const char *esc = NULL;
		size_t run = i, len;

		/* Copy the longest run that needs no escaping in one go. */
		while (run < n && (json_plain_byte[p[run]] & mask))
			run++;
		if (run > i) {
			text_buf_add(b, s + i, run - i);
			i = run;
			continue;
		}
		switch (c) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		default:
			break;
		}
		if (esc) {
			text_buf_puts(b, esc);
			i++;
			continue;
		}
		if (c < 0x80) {
			/* other control characters, and <, >, & for Go */
			char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf], '\0' };

			text_buf_puts(b, u);
			i++;
			continue;
		}
		len = text_utf8_decode(s + i, n - i, NULL);
		if (len == 0) {
			text_buf_puts(b, "\\ufffd");
			i++;
			continue;
		}
		if (go && len == 3 && c == 0xe2 && p[i + 1] == 0x80 && (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
			text_buf_puts(b, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
		else
			text_buf_add(b, s + i, len);
		i += len;
	}
	text_buf_putc(b, '"');
}

void text_buf_free(struct text_buf *b)
{
	free(b->data);
	*b = (struct text_buf){ 0 };
}

unsigned int text_distance(const char *a, const char *b, unsigned int max)
{
	/* Three rows of the optimal-string-alignment table: the swap looks two back. */
	unsigned int rows[3][64], *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	size_t n = strlen(a), m = strlen(b);

	if (n > 63 || m > 63 || (n > m ? n - m : m - n) > max)
		return max + 1;
	for (size_t j = 0; j <= m; j++)
		prev[j] = (unsigned int)j;
	for (size_t i = 1; i <= n; i++) {
		unsigned int *t;

		cur[0] = (unsigned int)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			unsigned int v = prev[j - 1] + cost;

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[m] <= max ? prev[m] : max + 1;
}

bool text_near(const char *a, const char *b, unsigned int max)
{
	return text_distance(a, b, max) <= max;
}
