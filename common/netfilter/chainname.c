/* The names and comments upstream's plugins give their netfilter chains and rules (pkg/utils) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/netfilter/chainname.h"
#include "common/util/cleanup.h"
#include "common/util/sha512.h"

int chainname_ipt(const char *network, const char *id, const char *prefix, char *buf)
{
	_cleanup_free_ char *text = NULL, *pre = NULL;

	if (asprintf(&text, "%s%s", network, id) < 0 || asprintf(&pre, "CNI-%s", prefix) < 0)
		return -ENOMEM;
	return sha512_name(CHAINNAME_IPT_LEN, pre, text, buf, CHAINNAME_IPT_LEN + 1);
}

/* Go's strconv.Quote of what a config can carry: printable bytes kept, the others escaped. */
static size_t quote(const char *s, char *buf, size_t size)
{
	size_t n = 0;

#define PUT(...) (n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, __VA_ARGS__))
	PUT("\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		const char *esc = NULL;

		switch (*p) {
		case '\a': esc = "\\a"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\v': esc = "\\v"; break;
		case '"': esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		default: break;
		}
		if (esc)
			PUT("%s", esc);
		else if (*p < 0x20 || *p == 0x7f)
			PUT("\\x%02x", *p);
		else
			PUT("%c", *p);
	}
	PUT("\"");
#undef PUT
	return n;
}

int chainname_comment(const char *network, const char *id, char *buf, size_t size)
{
	char qn[1024], qi[1024];

	if (quote(network, qn, sizeof(qn)) >= sizeof(qn) || quote(id, qi, sizeof(qi)) >= sizeof(qi) ||
	    (size_t)snprintf(buf, size, "name: %s id: %s", qn, qi) >= size)
		return -ENAMETOOLONG;
	return 0;
}
