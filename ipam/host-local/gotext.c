/* Go's white space, as upstream trims its store's files and splits resolv.conf lines */
#include <stdint.h>
#include <string.h>

#include "common/util/text.h"
#include "ipam/host-local/gotext.h"

size_t hl_space_len(const char *s, size_t n)
{
	uint32_t cp;
	size_t len = text_utf8_decode(s, n, &cp);

	if (!len)
		return 0;
	switch (cp) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
	case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f:
	case 0x3000:
		return len;
	default:
		return cp >= 0x2000 && cp <= 0x200a ? len : 0;
	}
}

/* The length of the white space that ends @s[0..n), whole characters only. */
static size_t trailing_space(const char *s, size_t n)
{
	size_t cut = 0;

	while (cut < n) {
		size_t k, got = 0;

		/* A character ends at n - cut: try the four lengths it can have. */
		for (k = 1; k <= 4 && k <= n - cut; k++) {
			got = hl_space_len(s + n - cut - k, k);
			if (got == k)
				break;
		}
		if (k > 4 || k > n - cut || got != k)
			break;
		cut += k;
	}
	return cut;
}

char *hl_trim_space(char *s, size_t n, size_t *ret_n)
{
	size_t k;

	while (n && (k = hl_space_len(s, n)) > 0) {
		s += k;
		n -= k;
	}
	n -= trailing_space(s, n);
	s[n] = '\0';
	*ret_n = n;
	return s;
}

const char *hl_next_field(const char **s, size_t *ret_n)
{
	const char *p = *s;
	size_t rest = strlen(p), k, n = 0;

	while (rest && (k = hl_space_len(p, rest)) > 0) {
		p += k;
		rest -= k;
	}
	if (!rest)
		return NULL;
	while (n < rest && hl_space_len(p + n, rest - n) == 0)
		n++;
	*s = p + n;
	*ret_n = n;
	return p;
}
