/* A pool's JSON text cut down to one node's share of its status before it is parsed */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/carve/skim.h"

/* An address or prefix longer than this parses as none: such an entry is kept, unread. */
#define IP_TEXT_MAX 128

struct scan {
	const char *p;
	const char *end;
};

/* The node's first entry, as carve_pool_trim() reads it for a CIDRPool's check. */
struct mine {
	bool found;
	bool has_prefix;
	struct ip_prefix prefix;
	bool has_gateway;
	struct ip_addr gateway;
};

struct skim {
	const char *node;
	size_t node_len;
	bool cidrpool;
	const char *copied; /* the text before this is in @out */
	struct text_buf out;
	bool dropped;
	bool failed;        /* a candidate entry that did not parse: nothing is cut */
};

enum level { LV_TOP, LV_POOL, LV_STATUS };

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/* A string at s->p: its raw bytes between the quotes (escapes not undone). */
static bool scan_string(struct scan *s, const char **ret, size_t *ret_len)
{
	const char *start;

	if (s->p >= s->end || *s->p != '"')
		return false;
	start = ++s->p;
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' && ++s->p >= s->end)
			return false;
		s->p++;
	}
	if (s->p >= s->end)
		return false;
	*ret = start;
	*ret_len = (size_t)(s->p - start);
	s->p++;
	return true;
}

static bool is_scalar_byte(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '-' || c == '+' || c == '.';
}

/* Any value at s->p, passed over; false on text that is not JSON's shape or too deep. */
static bool scan_value(struct scan *s, unsigned int depth)
{
	const char *a;
	size_t n;
	char open, close;

	skip_ws(s);
	if (s->p >= s->end)
		return false;
	open = *s->p;
	if (open == '"')
		return scan_string(s, &a, &n);
	if (open != '{' && open != '[') {
		a = s->p;
		while (s->p < s->end && is_scalar_byte(*s->p))
			s->p++;
		return s->p > a;
	}
	if (depth >= CNI_JSON_MAX_DEPTH)
		return false;
	close = open == '{' ? '}' : ']';
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return true;
	}
	for (;;) {
		if (open == '{') {
			skip_ws(s);
			if (!scan_string(s, &a, &n))
				return false;
			skip_ws(s);
			if (s->p >= s->end || *s->p != ':')
				return false;
			s->p++;
		}
		if (!scan_value(s, depth + 1))
			return false;
		skip_ws(s);
		if (s->p >= s->end)
			return false;
		if (*s->p == close) {
			s->p++;
			return true;
		}
		if (*s->p++ != ',')
			return false;
	}
}

/* A member's key and its ':' at s->p. */
static bool scan_key(struct scan *s)
{
	const char *a;
	size_t n;

	skip_ws(s);
	if (!scan_string(s, &a, &n))
		return false;
	skip_ws(s);
	if (s->p >= s->end || *s->p != ':')
		return false;
	s->p++;
	return true;
}

/*
 * An entry at s->p passed over, however deep: without recursion, each level's kind a bit
 * of @kinds. Its shape is checked as scan_value() checks it, so that text the parser would
 * refuse is never dropped; only its depth is not bounded: a status entry of another node
 * nested past the parser's limit is dropped, not a reason to refuse the pool (the whole
 * List with it).
 */
static bool scan_entry(struct scan *s)
{
	size_t cap = (size_t)(s->end - s->p) / 8 + 1, depth = 0;
	_cleanup_free_ unsigned char *objects = calloc(cap, 1); /* bit set: that level is an object */
	bool object;

	if (!objects)
		return false;
	for (;;) {
		const char *a;
		size_t n;

		/* A value: a container opens a level, anything else ends here. */
		skip_ws(s);
		if (s->p >= s->end)
			return false;
		a = s->p;
		if (*s->p == '{' || *s->p == '[') {
			object = *s->p == '{';
			objects[depth / 8] = (unsigned char)((objects[depth / 8] & ~(1u << (depth % 8))) |
							     ((unsigned int)object << (depth % 8)));
			depth++;
			s->p++;
			skip_ws(s);
			if (s->p < s->end && *s->p == (object ? '}' : ']')) {
				s->p++;
				depth--;
			} else {
				if (object && !scan_key(s))
					return false;
				continue;
			}
		} else if (*s->p == '"') {
			if (!scan_string(s, &a, &n))
				return false;
		} else {
			while (s->p < s->end && is_scalar_byte(*s->p))
				s->p++;
			if (s->p == a)
				return false;
		}
		/* After a value: the entry's end, or its container's ',' (then the next) or close. */
		for (;;) {
			if (depth == 0)
				return true;
			object = (objects[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
			skip_ws(s);
			if (s->p >= s->end)
				return false;
			if (*s->p != (object ? '}' : ']'))
				break;
			s->p++;
			depth--;
		}
		if (*s->p++ != ',' || (object && !scan_key(s)))
			return false;
	}
}

/* Whether an entry's text may name the node: an escape or a byte past ASCII may hide it. */
static bool may_name(const struct skim *k, const char *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == '\\' || (unsigned char)a[i] >= 0x80)
			return true;
	return memmem(a, n, k->node, k->node_len) != NULL;
}

static bool string_equals(struct json_object *v, const char *s)
{
	return json_object_is_type(v, json_type_string) &&
	       (size_t)json_object_get_string_len(v) == strlen(s) &&
	       strcmp(json_object_get_string(v), s) == 0;
}

/*
 * A candidate entry read whole: the node's first one gives @m. Return: false when it does
 * not parse (the whole text then will not either: nothing is cut).
 */
static bool read_candidate(struct skim *k, const char *a, size_t n, struct mine *m)
{
	_cleanup_(json_object_putp) struct json_object *e = NULL;
	struct cni_err err = { 0 };
	struct json_object *v;

	if (cjson_parse(a, n, "entry", &e, &err) < 0)
		return false;
	if (m->found || !string_equals(cjson_member_any(e, "nodeName"), k->node))
		return true;
	m->found = true;
	v = cjson_member_any(e, "prefix");
	m->has_prefix = json_object_is_type(v, json_type_string) &&
			ip_prefix_parse(json_object_get_string(v), &m->prefix) == 0;
	v = cjson_member_any(e, "gateway");
	m->has_gateway = json_object_is_type(v, json_type_string) &&
			 ip_addr_parse(json_object_get_string(v), &m->gateway) == 0;
	return true;
}

/* A string value's raw bytes, NUL-terminated in @buf; false when it is longer. */
static bool ip_text(const char *a, size_t n, char *buf)
{
	if (n >= IP_TEXT_MAX)
		return false;
	memcpy(buf, a, n);
	buf[n] = '\0';
	return true;
}

/* A key as json-c's lookup of a member matches it: byte for byte (an escaped one is not). */
static bool key_is(const char *key, size_t n, const char *name)
{
	return n == strlen(name) && memcmp(key, name, n) == 0;
}

/*
 * Whether carve_pool_trim() might keep an entry that cannot name the node, for the
 * CIDRPool check: its prefix the address of the node's, or its gateway the node's. Its
 * text is plain ASCII without escapes, so a key is its bytes (matched exactly, as
 * cjson_member_any() matches an API object's keys) and a string value is its bytes.
 */
static bool conflicts(const struct mine *m, const char *a, size_t n)
{
	struct scan s = { a, a + n };
	const char *pv = NULL, *gv = NULL;
	size_t pn = 0, gn = 0, p_keys = 0, g_keys = 0;
	bool p_str = false, g_str = false;
	char buf[IP_TEXT_MAX];

	skip_ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return false;
	s.p++;
	skip_ws(&s);
	while (s.p < s.end && *s.p != '}') {
		const char *key, *v;
		size_t kn, vn = 0;
		bool is_str;

		if (!scan_string(&s, &key, &kn))
			return true;
		skip_ws(&s);
		if (s.p >= s.end || *s.p != ':')
			return true;
		s.p++;
		skip_ws(&s);
		is_str = s.p < s.end && *s.p == '"';
		v = s.p;
		if (is_str ? !scan_string(&s, &v, &vn) : !scan_value(&s, 1))
			return true;
		if (key_is(key, kn, "prefix")) {
			pv = v, pn = vn, p_str = is_str, p_keys++;
		} else if (key_is(key, kn, "gateway")) {
			gv = v, gn = vn, g_str = is_str, g_keys++;
		}
		skip_ws(&s);
		if (s.p < s.end && *s.p == ',') {
			s.p++;
			skip_ws(&s);
		}
	}
	/* Given twice, which one json-c's table yields is its own: kept, unread. */
	if (p_keys > 1 || g_keys > 1)
		return true;
	if (p_str && m->has_prefix) {
		struct ip_prefix y;

		if (!ip_text(pv, pn, buf))
			return true;
		if (ip_prefix_parse(buf, &y) == 0 && ip_addr_equal(&y.addr, &m->prefix.addr))
			return true;
	}
	if (g_str && m->has_gateway) {
		struct ip_addr y;

		if (!ip_text(gv, gn, buf))
			return true;
		if (ip_addr_parse(buf, &y) == 0 && ip_addr_equal(&y, &m->gateway))
			return true;
	}
	return false;
}

/*
 * The allocations array at s->p ('['), written to k->out without the entries the trim
 * drops; false when it is not JSON's shape (left for the parser).
 */
static bool skim_array(struct skim *k, struct scan *s)
{
	struct scan t = *s;
	struct mine m = { 0 };
	const char *open = s->p;
	size_t kept = 0, all = 0;

	/* First the node's own entry: a CIDRPool keeps the entries that clash with it. */
	t.p++;
	skip_ws(&t);
	if (t.p < t.end && *t.p == ']') {
		s->p = t.p + 1;
		return true;
	}
	for (;;) {
		const char *a;

		skip_ws(&t);
		a = t.p;
		if (!scan_entry(&t))
			return false;
		all++;
		if (may_name(k, a, (size_t)(t.p - a)) && !read_candidate(k, a, (size_t)(t.p - a), &m))
			k->failed = true;
		skip_ws(&t);
		if (t.p >= t.end)
			return false;
		if (*t.p == ']')
			break;
		if (*t.p++ != ',')
			return false;
	}
	if (k->failed)
		return false;
	/* Then the entries kept, in order; the rest of the text as it was. */
	t = *s;
	t.p++;
	text_buf_add(&k->out, k->copied, (size_t)(open - k->copied));
	text_buf_putc(&k->out, '[');
	for (size_t i = 0; i < all; i++) {
		const char *a;
		size_t n;

		skip_ws(&t);
		a = t.p;
		(void)scan_entry(&t);
		n = (size_t)(t.p - a);
		if (may_name(k, a, n) || (k->cidrpool && m.found && conflicts(&m, a, n))) {
			if (kept++)
				text_buf_putc(&k->out, ',');
			text_buf_add(&k->out, a, n);
		}
		skip_ws(&t);
		t.p++; /* ',' or ']' */
	}
	text_buf_putc(&k->out, ']');
	k->copied = t.p;
	k->dropped |= kept < all;
	s->p = t.p;
	return true;
}

/*
 * The members of the object at s->p: a pool's (or an event's, whose "object" is read as a
 * pool) "status", and its "allocations". Every member of such a name is read: with one
 * given twice, the parser keeps one, and an entry dropped from the other is never read.
 */
static bool walk_object(struct skim *k, struct scan *s, enum level lv, unsigned int depth)
{
	s->p++;
	skip_ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return true;
	}
	for (;;) {
		const char *key;
		size_t kn;
		bool ok;

		skip_ws(s);
		if (!scan_string(s, &key, &kn))
			return false;
		skip_ws(s);
		if (s->p >= s->end || *s->p != ':')
			return false;
		s->p++;
		skip_ws(s);
		if (s->p >= s->end)
			return false;
		if (lv == LV_TOP && key_is(key, kn, "object") && *s->p == '{')
			ok = walk_object(k, s, LV_POOL, depth + 1);
		else if (lv != LV_STATUS && key_is(key, kn, "status") && *s->p == '{')
			ok = walk_object(k, s, LV_STATUS, depth + 1);
		else if (lv == LV_STATUS && key_is(key, kn, "allocations") && *s->p == '[')
			ok = skim_array(k, s);
		else
			ok = scan_value(s, depth + 1);
		if (!ok)
			return false;
		skip_ws(s);
		if (s->p >= s->end)
			return false;
		if (*s->p == '}') {
			s->p++;
			return true;
		}
		if (*s->p++ != ',')
			return false;
	}
}

int carve_status_skim(const char *text, size_t len, const char *node, bool cidrpool, char **ret,
		      size_t *ret_len)
{
	struct skim k = { .node = node, .node_len = strlen(node), .cidrpool = cidrpool,
			  .copied = text };
	struct scan s = { text, text + len };

	skip_ws(&s);
	if (s.p >= s.end || *s.p != '{' || !walk_object(&k, &s, LV_TOP, 0) || !k.dropped) {
		text_buf_free(&k.out);
		return 0;
	}
	text_buf_add(&k.out, k.copied, (size_t)(text + len - k.copied));
	if (k.out.oom) {
		text_buf_free(&k.out);
		return -ENOMEM;
	}
	*ret = k.out.data;
	*ret_len = k.out.len;
	return 1;
}
