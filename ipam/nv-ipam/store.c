/*
 * The node's allocation store: one JSON file changed under an exclusive flock
 *
 * On-disk format (version 1), one compact JSON document followed by a newline:
 *
 *   {"version":1,
 *    "pools":{"<pool key>":{"lastReservedIP":"<ip>"}, ...},
 *    "allocations":[{"pool":"<pool key>","ip":"<ip>","containerID":"...","ifname":"...",
 *                    "network":"<CNI network name>","podNamespace":"...","podName":"...",
 *                    "podUID":"...","deviceID":"...","created":"<RFC 3339 UTC>"}, ...]}
 *
 * - "version" is required and must be 1; another version is refused (code 5), and it is
 *   checked before anything else is trusted, wherever it appears in the object.
 * - A pool record exists once a round-robin pick was made in it (or it came from a migrated
 *   store); "lastReservedIP" is left out when unknown.
 * - "pool" (not empty), "ip", "containerID" and "ifname" are required in an allocation; the
 *   other strings default to "" and "created" to the epoch; a member given twice is refused.
 *   "created" is written as "YYYY-MM-DDTHH:MM:SSZ" (clamped to years 1970..9999); any
 *   RFC 3339 time (fraction, offset) is read. A null member counts as absent.
 * - An IP is held at most once per pool; the same IP may be held in two pools.
 * - Strings are written as valid UTF-8: bytes that are not are written as U+FFFD, so a
 *   store we write is always one we can read back.
 * - Members not listed here are validated and ignored.
 * - An empty (0-byte) or missing file is an empty store; anything else that does not parse
 *   is corrupt, reported (code 5) and left as it is. Files over 64 MiB are refused.
 *
 * Our format is read by a strict one-pass reader (see "our format" below) rather than
 * json-c, which alone takes ~30 ms to build and free the tree of a 10000-allocation store.
 *
 * Concurrency: "<path>.lock" is flock()ed exclusively from open to close. The store file is
 * replaced by rename on commit, so the lock cannot live on it.
 *
 * A file written by the reference nv-ipam node daemon (root {version, checksum, pools}, each
 * pool {name, entries, last_pool_config, last_reserved_ip}) is recognised by its "checksum"
 * or by pools holding "entries", verified the way the daemon does (FNV-1a-32 over the
 * document as Go's encoding/json writes it with "checksum":0; a zero checksum is refused as
 * the daemon refuses it), converted (network name unknown: ""), and marked dirty so the next
 * commit rewrites it in our format. Every entry is kept, including those a newer daemon keeps
 * with "released_at" for a release cooldown (they still hold their IP); an empty create_time
 * becomes the epoch. That file is read with json-c and the cjson getters (once, when
 * migrating); its IPs enter the checksum as written, which is how the daemon prints them.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/cni/error.h"
#include "common/cni/json.h"
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store.h"

#define STORE_VERSION 1
/* A /16 CIDRPool block fully used is ~20 MiB in our format; leave room beyond that. */
#define STORE_MAX_BYTES (64u << 20)
/* The deepest document is the reference layout: root.pools.<key>.entries.<id>.metadata. */
#define STORE_MAX_DEPTH 16
#define LOCK_BACKOFF_MAX_MS 5
/* 9999-12-31T23:59:59Z, the last second RFC 3339 can write with four year digits. */
#define CREATED_MAX ((time_t)253402300799LL)

DEFINE_CLEANUP_FUNC(json_tokener_freep, json_tokener *, json_tokener_free)

/* ---- growable text buffer ---- */

struct buf {
	char *data;
	size_t len;
	size_t cap;
	bool oom; /* sticky: checked once at the end */
};

static void buf_reserve(struct buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom || b->len + more <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
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

static void buf_add(struct buf *b, const char *s, size_t n)
{
	buf_reserve(b, n);
	if (b->oom)
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
}

static void buf_puts(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static void buf_putc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

/*
 * Bytes that stand for themselves inside a JSON string: bit 0 for our reader and writer
 * (printable ASCII but '"' and '\\'), bit 1 for Go's encoder, which also escapes '<', '>'
 * and '&'.
 */
#define ROW3 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3
static const unsigned char plain_byte[256] = {
	[0x20] = 3, 3, 0, 3, 3, 3, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, /* '"' 0x22, '&' 0x26 */
	[0x30] = 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 3, 1, 3, /* '<' 0x3c, '>' 0x3e */
	[0x40] = ROW3,
	[0x50] = 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0, 3, 3, 3, /* '\\' 0x5c */
	[0x60] = ROW3,
	[0x70] = ROW3,
	/* control characters and non-ASCII bytes: 0 */
};
#undef ROW3

/*
 * Write @s as a JSON string. @go_html applies Go's encoding/json rules on top (escape <, >,
 * &, U+2028 and U+2029), which the reference checksum is computed over.
 */
static void buf_put_json_str(struct buf *b, const char *s, bool go_html)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	unsigned char mask = go_html ? 2 : 1;
	size_t n = strlen(s);

	buf_reserve(b, n + 2);
	buf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		size_t run = i;
		size_t len;

		/* Copy the longest run that needs no escaping in one go. */
		while (run < n && (plain_byte[p[run]] & mask))
			run++;
		if (run > i) {
			buf_add(b, s + i, run - i);
			i = run;
			continue;
		}
		switch (c) {
		case '"':
			buf_puts(b, "\\\"");
			i++;
			continue;
		case '\\':
			buf_puts(b, "\\\\");
			i++;
			continue;
		case '\b':
			buf_puts(b, "\\b");
			i++;
			continue;
		case '\f':
			buf_puts(b, "\\f");
			i++;
			continue;
		case '\n':
			buf_puts(b, "\\n");
			i++;
			continue;
		case '\r':
			buf_puts(b, "\\r");
			i++;
			continue;
		case '\t':
			buf_puts(b, "\\t");
			i++;
			continue;
		default:
			break;
		}
		if (c < 0x80) {
			/* other control characters, and <, >, & for Go */
			char esc[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf], '\0' };

			buf_puts(b, esc);
			i++;
			continue;
		}
		len = text_utf8_decode(s + i, n - i, NULL);
		if (len == 0) {
			buf_puts(b, "\\ufffd");
			i++;
			continue;
		}
		if (go_html && len == 3 && c == 0xe2 && p[i + 1] == 0x80 &&
		    (p[i + 2] == 0xa8 || p[i + 2] == 0xa9))
			buf_puts(b, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
		else
			buf_add(b, s + i, len);
		i += len;
	}
	buf_putc(b, '"');
}

static void buf_put_ip(struct buf *b, const struct ip_addr *ip)
{
	char s[IP_PREFIX_STRLEN + 2], *p = s;

	/* inet_ntop() goes through sprintf() for IPv4, a third of the save time. */
	*p++ = '"';
	if (ip->family == AF_INET) {
		for (int i = 0; i < 4; i++) {
			unsigned int v = ip->bytes[i];

			if (v >= 100)
				*p++ = (char)('0' + v / 100);
			if (v >= 10)
				*p++ = (char)('0' + v / 10 % 10);
			*p++ = (char)('0' + v % 10);
			*p++ = '.';
		}
		p--;
	} else {
		ip_addr_format(ip, p, IP_PREFIX_STRLEN);
		p += strlen(p);
	}
	*p++ = '"';
	buf_add(b, s, (size_t)(p - s));
}

/* ---- RFC 3339 times ---- */

static bool take_digits(const char **p, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*ret = v;
	return true;
}

static bool is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (timegm() is slow: it normalises). */
static int64_t days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)", the fraction dropped. */
static int rfc3339_parse(const char *s, time_t *ret)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	const char *p = s;
	time_t t;

	if (!take_digits(&p, 4, &y) || *p++ != '-' || !take_digits(&p, 2, &mo) || *p++ != '-' ||
	    !take_digits(&p, 2, &d) || *p++ != 'T' || !take_digits(&p, 2, &h) || *p++ != ':' ||
	    !take_digits(&p, 2, &mi) || *p++ != ':' || !take_digits(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (!take_digits(&p, 2, &oh) || *p++ != ':' || !take_digits(&p, 2, &om) || oh > 23 ||
		    om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p != '\0' || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (mo == 2 && is_leap(y)) || h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	t = (time_t)days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= (time_t)sign * (oh * 3600 + om * 60);
	/* Before the epoch means "unknown" here; we never write such a time. */
	*ret = t < 0 ? 0 : t;
	return 0;
}

static void put_digits(char *p, int v, int n)
{
	while (n--) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

static void buf_put_time(struct buf *b, time_t t)
{
	char s[] = "\"YYYY-MM-DDTHH:MM:SSZ\"";
	int64_t days, secs, z, era, doe, yoe, doy, mp, y, m, d;

	if (t < 0)
		t = 0;
	if (t > CREATED_MAX)
		t = CREATED_MAX;
	/* The inverse of days_from_civil(); gmtime_r() takes the time zone lock for nothing. */
	days = (int64_t)t / 86400;
	secs = (int64_t)t % 86400;
	z = days + 719468;
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	put_digits(s + 1, (int)y, 4);
	put_digits(s + 6, (int)m, 2);
	put_digits(s + 9, (int)d, 2);
	put_digits(s + 12, (int)(secs / 3600), 2);
	put_digits(s + 15, (int)(secs / 60 % 60), 2);
	put_digits(s + 18, (int)(secs % 60), 2);
	buf_add(b, s, sizeof(s) - 1);
}

/* ---- memory ---- */

/*
 * An allocation's strings live in one block that starts with the pool key: one malloc
 * instead of eight matters when tens of thousands are loaded on every CNI call.
 */
static void alloc_free_strings(struct nvipam_alloc *a)
{
	free(a->pool);
}

static void store_free_data(struct nvipam_store *s)
{
	for (size_t i = 0; i < s->n_allocs; i++)
		alloc_free_strings(&s->allocs[i]);
	free(s->allocs);
	s->allocs = NULL;
	s->n_allocs = 0;
	s->cap_allocs = 0;
	for (size_t i = 0; i < s->n_pools; i++)
		free(s->pools[i].key);
	free(s->pools);
	s->pools = NULL;
	s->n_pools = 0;
}

/* Deep copy of @src into @dst (NULL strings become ""); on failure @dst is not written. */
static int alloc_copy(struct nvipam_alloc *dst, const struct nvipam_alloc *src)
{
	const char *in[] = { src->pool,	    src->container_id,	src->ifname,   src->network,
			     src->pod_namespace, src->pod_name, src->pod_uid, src->device_id };
	char **out[ARRAY_SIZE(in)];
	struct nvipam_alloc a = { .ip = src->ip, .created = src->created };
	size_t len[ARRAY_SIZE(in)], total = 0;
	char *block, *p;

	out[0] = &a.pool;
	out[1] = &a.container_id;
	out[2] = &a.ifname;
	out[3] = &a.network;
	out[4] = &a.pod_namespace;
	out[5] = &a.pod_name;
	out[6] = &a.pod_uid;
	out[7] = &a.device_id;
	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		len[i] = in[i] ? strlen(in[i]) : 0;
		total += len[i] + 1;
	}
	block = malloc(total);
	if (!block)
		return -ENOMEM;
	p = block;
	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		if (len[i])
			memcpy(p, in[i], len[i]);
		p[len[i]] = '\0';
		*out[i] = p;
		p += len[i] + 1;
	}
	*dst = a;
	return 0;
}

static struct nvipam_store_pool *pool_find(const struct nvipam_store *s, const char *key)
{
	for (size_t i = 0; i < s->n_pools; i++)
		if (strcmp(s->pools[i].key, key) == 0)
			return &s->pools[i];
	return NULL;
}

/* The record of pool @key, created (without a last reserved IP) when missing. */
static int pool_get(struct nvipam_store *s, const char *key, struct nvipam_store_pool **ret)
{
	struct nvipam_store_pool *p = pool_find(s, key);
	char *k;

	if (!p) {
		k = strdup(key);
		if (!k)
			return -ENOMEM;
		p = realloc(s->pools, (s->n_pools + 1) * sizeof(*p));
		if (!p) {
			free(k);
			return -ENOMEM;
		}
		s->pools = p;
		p = &s->pools[s->n_pools++];
		*p = (struct nvipam_store_pool){ .key = k };
	}
	*ret = p;
	return 0;
}

static bool same_ip(const struct ip_addr *a, const struct ip_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, sizeof(a->bytes)) == 0;
}

static int cmp_pool_ip(const void *x, const void *y)
{
	const struct nvipam_alloc *a = *(const struct nvipam_alloc *const *)x;
	const struct nvipam_alloc *b = *(const struct nvipam_alloc *const *)y;
	int c = strcmp(a->pool, b->pool);

	if (c)
		return c;
	if (a->ip.family != b->ip.family)
		return a->ip.family < b->ip.family ? -1 : 1;
	return memcmp(a->ip.bytes, b->ip.bytes, sizeof(a->ip.bytes));
}

int nvipam_alloc_ptr_cmp(const void *a, const void *b)
{
	return cmp_pool_ip(a, b);
}

/*
 * Find an IP held twice in one pool (O(n log n): stores of tens of thousands are loaded on
 * every CNI call). Return: -ENOMEM, 1 with *ret_dup set when one is found, 0 otherwise.
 */
static int find_duplicate_ip(const struct nvipam_store *s, const struct nvipam_alloc **ret_dup)
{
	_cleanup_free_ const struct nvipam_alloc **v = NULL;

	if (s->n_allocs < 2)
		return 0;
	v = malloc(s->n_allocs * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_allocs; i++)
		v[i] = &s->allocs[i];
	qsort(v, s->n_allocs, sizeof(*v), cmp_pool_ip);
	for (size_t i = 1; i < s->n_allocs; i++) {
		if (cmp_pool_ip(&v[i - 1], &v[i]) == 0) {
			*ret_dup = v[i];
			return 1;
		}
	}
	return 0;
}

/* ---- parsing ---- */

/* Why a document is refused: filled by the parsers, turned into one code-5 error. */
struct why {
	struct cni_err e;
};

static int why_set(struct why *w, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int why_set(struct why *w, int r, const char *fmt, ...)
{
	va_list ap;

	if (w->e.code != CNI_OK)
		return r;
	w->e.code = r == -ENOMEM ? CNI_ERR_INTERNAL : CNI_ERR_IO;
	va_start(ap, fmt);
	vsnprintf(w->e.msg, sizeof(w->e.msg), fmt, ap);
	va_end(ap);
	return r;
}

/* Prefix the reason already recorded (by a cjson getter) with where it was found. */
static int why_at(struct why *w, int r, const char *where)
{
	char msg[sizeof(w->e.msg) + 512];
	size_t n;

	if (r == -ENOMEM) {
		w->e.code = CNI_ERR_INTERNAL;
		return r;
	}
	snprintf(msg, sizeof(msg), "%.500s: %s", where, w->e.msg);
	n = strnlen(msg, sizeof(w->e.msg) - 1);
	memcpy(w->e.msg, msg, n);
	w->e.msg[n] = '\0';
	w->e.code = CNI_ERR_IO;
	return r;
}

static int parse_json(const char *data, size_t len, struct json_object **ret, struct why *w)
{
	_cleanup_(json_tokener_freep) json_tokener *tok = NULL;
	enum json_tokener_error jerr;
	struct json_object *o;
	size_t used;

	/*
	 * Not cjson_parse(): its bound is sized for network configs (4 MiB), and a daemon store
	 * of a large CIDRPool block is bigger. Same strictness otherwise.
	 */
	tok = json_tokener_new_ex(STORE_MAX_DEPTH);
	if (!tok)
		return why_set(w, -ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, data, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o || jerr != json_tokener_success) {
		json_object_put(o);
		if (jerr == json_tokener_continue)
			return why_set(w, -EINVAL, "unexpected end of JSON input");
		return why_set(w, -EINVAL, "%s at offset %zu", json_tokener_error_desc(jerr),
			       json_tokener_get_parse_end(tok));
	}
	used = json_tokener_get_parse_end(tok);
	while (used < len && strchr(" \t\r\n", data[used]))
		used++;
	if (used != len) {
		json_object_put(o);
		return why_set(w, -EINVAL, "invalid character after top-level value at offset %zu",
			       used);
	}
	if (!json_object_is_type(o, json_type_object)) {
		why_set(w, -EINVAL, "expected an object, got %s", cjson_type_name(o));
		json_object_put(o);
		return -EINVAL;
	}
	*ret = o;
	return 0;
}

/* Optional string member, "" when absent; the pointer is owned by @obj. */
static int get_str(struct json_object *obj, const char *key, const char **ret, struct why *w)
{
	const char *v = "";
	int r = cjson_get_str(obj, key, &v, &w->e);

	if (r < 0)
		return r;
	*ret = v;
	return 0;
}

static int get_ip(struct json_object *obj, const char *key, bool required, bool *ret_has,
		  struct ip_addr *ret, struct why *w)
{
	const char *v = "";
	int r;

	r = cjson_get_str(obj, key, &v, &w->e);
	if (r < 0)
		return r;
	if (!*v) {
		if (required)
			return why_set(w, -EINVAL, "field \"%s\" is missing", key);
		*ret_has = false;
		return 0;
	}
	if (ip_addr_parse(v, ret) < 0)
		return why_set(w, -EINVAL, "field \"%s\": \"%s\" is not an IP address", key, v);
	*ret_has = true;
	return 0;
}

static int get_time(struct json_object *obj, const char *key, time_t *ret, struct why *w)
{
	const char *v = "";
	int r;

	r = get_str(obj, key, &v, w);
	if (r < 0)
		return r;
	*ret = 0;
	if (*v && rfc3339_parse(v, ret) < 0)
		return why_set(w, -EINVAL, "field \"%s\": \"%s\" is not an RFC 3339 time", key, v);
	return 0;
}

/* Append a copy of @a to the store (the array is sized by the caller). */
static int store_push(struct nvipam_store *s, const struct nvipam_alloc *a)
{
	int r = alloc_copy(&s->allocs[s->n_allocs], a);

	if (r < 0)
		return r;
	s->n_allocs++;
	return 0;
}

/* Record pool @key, with its last reserved IP when @has. */
static int pool_set_last(struct nvipam_store *s, const char *key, bool has,
			 const struct ip_addr *ip, struct why *w)
{
	struct nvipam_store_pool *p;
	int r;

	r = pool_get(s, key, &p);
	if (r < 0)
		return why_set(w, r, "out of memory");
	p->has_last = has;
	if (has)
		p->last_reserved = *ip;
	return 0;
}

/* ---- our format: a strict one-pass reader ---- */

/*
 * json-c builds a tree of hash tables, which for 10000 allocations takes longer than the
 * whole load may (~30 ms to parse and free on the build machine). Our own format is read in
 * one pass straight into the structs instead, to the same strictness as cjson_parse():
 * RFC 8259 grammar, UTF-8 validated, no NUL in strings, bounded depth, nothing after the
 * value. Unknown members are validated and skipped.
 */
struct rd {
	const char *start;
	const char *p;
	const char *end;
	int depth;
	struct buf str; /* the last string read, decoded and NUL-terminated */
	struct why *w;
};

enum {
	RD_REFERENCE = 1, /* the reference daemon's layout: read it with json-c */
};

static int rd_fail(struct rd *r, const char *what)
{
	if (r->p >= r->end)
		what = "unexpected end of JSON input";
	return why_set(r->w, -EINVAL, "%s at offset %zu", what, (size_t)(r->p - r->start));
}

static void rd_ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
		r->p++;
}

static bool rd_eat(struct rd *r, char c)
{
	rd_ws(r);
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

/* The JSON type the next value would have, for messages; consumes nothing. */
static const char *rd_type(struct rd *r)
{
	rd_ws(r);
	if (r->p >= r->end)
		return "nothing";
	switch (*r->p) {
	case '"':
		return "string";
	case '{':
		return "object";
	case '[':
		return "array";
	case 't':
	case 'f':
		return "boolean";
	case 'n':
		return "null";
	default:
		return "number";
	}
}

static int rd_literal(struct rd *r, const char *lit)
{
	size_t n = strlen(lit);

	rd_ws(r);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, lit, n) != 0)
		return rd_fail(r, "unexpected character");
	r->p += n;
	return 0;
}

/* A JSON null, consumed when next: members holding null count as absent (as cjson_get()). */
static bool rd_null(struct rd *r)
{
	rd_ws(r);
	if (r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
		r->p += 4;
		return true;
	}
	return false;
}

static int rd_hex4(struct rd *r, uint32_t *ret)
{
	uint32_t v = 0;

	if (r->end - r->p < 4)
		return rd_fail(r, "unexpected end of JSON input");
	for (int i = 0; i < 4; i++) {
		char c = *r->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return rd_fail(r, "invalid \\u escape");
	}
	*ret = v;
	return 0;
}

static void buf_put_utf8(struct buf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	buf_add(b, u, n);
}

static int rd_escape(struct rd *r)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e;
	uint32_t cp, lo;
	int ret;

	if (r->p >= r->end)
		return rd_fail(r, "unexpected end of JSON input");
	e = strchr(from, *r->p);
	if (*r->p && e) {
		buf_putc(&r->str, to[e - from]);
		r->p++;
		return 0;
	}
	if (*r->p != 'u')
		return rd_fail(r, "invalid escape");
	r->p++;
	ret = rd_hex4(r, &cp);
	if (ret < 0)
		return ret;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (r->end - r->p < 2 || r->p[0] != '\\' || r->p[1] != 'u')
			return rd_fail(r, "unpaired surrogate in \\u escape");
		r->p += 2;
		ret = rd_hex4(r, &lo);
		if (ret < 0)
			return ret;
		if (lo < 0xdc00 || lo > 0xdfff)
			return rd_fail(r, "unpaired surrogate in \\u escape");
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	} else if (cp >= 0xdc00 && cp <= 0xdfff) {
		return rd_fail(r, "unpaired surrogate in \\u escape");
	} else if (cp == 0) {
		/* It would cut the C string short. */
		return rd_fail(r, "NUL character in string");
	}
	buf_put_utf8(&r->str, cp);
	return 0;
}

/* Read a string into r->str. */
static int rd_string(struct rd *r)
{
	int ret;

	r->str.len = 0;
	if (!rd_eat(r, '"'))
		return rd_fail(r, "expected a string");
	for (;;) {
		const char *run = r->p;
		unsigned char c;
		size_t len;

		while (r->p < r->end && (plain_byte[(unsigned char)*r->p] & 1))
			r->p++;
		buf_add(&r->str, run, (size_t)(r->p - run));
		if (r->p >= r->end)
			return rd_fail(r, "unexpected end of JSON input");
		c = (unsigned char)*r->p;
		if (c == '"') {
			r->p++;
			break;
		}
		if (c == '\\') {
			r->p++;
			ret = rd_escape(r);
			if (ret < 0)
				return ret;
			continue;
		}
		if (c < 0x20)
			return rd_fail(r, "control character in string");
		len = text_utf8_decode(r->p, (size_t)(r->end - r->p), NULL);
		if (!len)
			return rd_fail(r, "invalid UTF-8");
		buf_add(&r->str, r->p, len);
		r->p += len;
	}
	/* NUL-terminated, the terminator not counted. */
	buf_putc(&r->str, '\0');
	if (r->str.oom)
		return why_set(r->w, -ENOMEM, "out of memory");
	r->str.len--;
	return 0;
}

/* A number per RFC 8259; @ret_int tells whether it is an integer that fits @ret. */
static int rd_number(struct rd *r, bool *ret_int, int64_t *ret)
{
	const char *s;
	bool integer = true;
	char tmp[24];

	rd_ws(r);
	s = r->p;
	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p >= r->end || *r->p < '0' || *r->p > '9')
		return rd_fail(r, "unexpected character");
	if (*r->p == '0')
		r->p++;
	else
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	if (r->p < r->end && *r->p == '.') {
		integer = false;
		r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9')
			return rd_fail(r, "number expected");
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		integer = false;
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (r->p >= r->end || *r->p < '0' || *r->p > '9')
			return rd_fail(r, "number expected");
		while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
			r->p++;
	}
	if (!ret_int)
		return 0;
	*ret_int = false;
	if (integer && (size_t)(r->p - s) < sizeof(tmp)) {
		memcpy(tmp, s, (size_t)(r->p - s));
		tmp[r->p - s] = '\0';
		errno = 0;
		*ret = strtoll(tmp, NULL, 10);
		*ret_int = errno == 0;
	}
	return 0;
}

static int rd_open(struct rd *r, char c)
{
	if (!rd_eat(r, c))
		return rd_fail(r, c == '{' ? "expected an object" : "expected an array");
	if (++r->depth > STORE_MAX_DEPTH)
		return rd_fail(r, "nesting too deep");
	return 0;
}

/*
 * Next member of an object opened with rd_open(): 1 with its name in r->str and the ':'
 * consumed, 0 after the closing '}'. @i counts the members seen.
 */
static int rd_member(struct rd *r, size_t *i)
{
	int ret;

	if (rd_eat(r, '}')) {
		r->depth--;
		return 0;
	}
	if ((*i)++ && !rd_eat(r, ','))
		return rd_fail(r, "expected ',' or '}'");
	ret = rd_string(r);
	if (ret < 0)
		return ret;
	if (!rd_eat(r, ':'))
		return rd_fail(r, "expected ':'");
	return 1;
}

/* Whether another element of an array opened with rd_open() follows: 1, or 0 after ']'. */
static int rd_element(struct rd *r, size_t *i)
{
	if (rd_eat(r, ']')) {
		r->depth--;
		return 0;
	}
	if ((*i)++ && !rd_eat(r, ','))
		return rd_fail(r, "expected ',' or ']'");
	rd_ws(r);
	if (r->p < r->end && *r->p == ']')
		return rd_fail(r, "unexpected character");
	return 1;
}

/* Validate and skip one value. */
static int rd_skip(struct rd *r)
{
	size_t i = 0;
	int ret;

	rd_ws(r);
	if (r->p >= r->end)
		return rd_fail(r, "unexpected end of JSON input");
	switch (*r->p) {
	case '"':
		return rd_string(r);
	case '{':
		ret = rd_open(r, '{');
		while (ret >= 0 && (ret = rd_member(r, &i)) > 0)
			ret = rd_skip(r);
		return ret;
	case '[':
		ret = rd_open(r, '[');
		while (ret >= 0 && (ret = rd_element(r, &i)) > 0)
			ret = rd_skip(r);
		return ret;
	case 't':
		return rd_literal(r, "true");
	case 'f':
		return rd_literal(r, "false");
	case 'n':
		return rd_literal(r, "null");
	default:
		return rd_number(r, NULL, NULL);
	}
}

/* A string member's value into r->str: 1, or 0 when it is null. */
static int rd_str_value(struct rd *r, const char *where, const char *key)
{
	int ret;

	if (rd_null(r))
		return 0;
	rd_ws(r);
	if (r->p >= r->end)
		return rd_fail(r, "unexpected end of JSON input");
	if (*r->p != '"')
		return why_set(r->w, -EINVAL, "%sfield \"%s\": expected a string, got %s", where, key,
			       rd_type(r));
	ret = rd_string(r);
	return ret < 0 ? ret : 1;
}

static int rd_ip_value(struct rd *r, const char *where, const char *key, bool *ret_has,
		       struct ip_addr *ret)
{
	int x = rd_str_value(r, where, key);

	if (x < 0)
		return x;
	*ret_has = x > 0 && r->str.len > 0;
	if (*ret_has && ip_addr_parse(r->str.data, ret) < 0)
		return why_set(r->w, -EINVAL, "%sfield \"%s\": \"%s\" is not an IP address", where, key,
			       r->str.data);
	return 0;
}

static int rd_version(struct rd *r)
{
	bool is_int;
	int64_t v;
	int ret;

	rd_ws(r);
	if (r->p >= r->end)
		return rd_fail(r, "unexpected end of JSON input");
	if (!((*r->p >= '0' && *r->p <= '9') || *r->p == '-'))
		return why_set(r->w, -EINVAL, "field \"version\": expected an integer, got %s",
			       rd_type(r));
	ret = rd_number(r, &is_int, &v);
	if (ret < 0)
		return ret;
	if (!is_int)
		return why_set(r->w, -EINVAL, "field \"version\": expected an integer, got number");
	if (v != STORE_VERSION)
		return why_set(r->w, -EPROTONOSUPPORT,
			       "unsupported version %" PRId64 " (this plugin reads version %d)", v,
			       STORE_VERSION);
	return 0;
}

/*
 * Check "version" (and look for the reference layout) before reading anything else, for a
 * file whose first member is not "version" (we always write it first).
 */
static int rd_prescan(const char *data, size_t len, struct why *w)
{
	struct rd r = { .start = data, .p = data, .end = data + len, .w = w };
	bool version = false;
	size_t i = 0;
	int ret;

	ret = rd_open(&r, '{');
	while (ret >= 0 && (ret = rd_member(&r, &i)) > 0) {
		if (strcmp(r.str.data, "checksum") == 0) {
			ret = RD_REFERENCE;
			break;
		}
		if (strcmp(r.str.data, "version") == 0) {
			ret = rd_version(&r);
			version = true;
		} else {
			ret = rd_skip(&r);
		}
	}
	free(r.str.data);
	if (ret == 0 && !version)
		return why_set(w, -EINVAL, "field \"version\" is missing");
	return ret;
}

static int rd_pools(struct rd *r, struct nvipam_store *s)
{
	size_t i = 0;
	int ret;

	if (rd_null(r))
		return 0;
	rd_ws(r);
	if (r->p >= r->end)
		return rd_fail(r, "unexpected end of JSON input");
	if (*r->p != '{')
		return why_set(r->w, -EINVAL, "field \"pools\": expected an object, got %s", rd_type(r));
	ret = rd_open(r, '{');
	while (ret >= 0 && (ret = rd_member(r, &i)) > 0) {
		_cleanup_free_ char *key = strdup(r->str.data);
		char where[96];
		struct ip_addr ip = { 0 };
		bool has = false;
		size_t k = 0;

		if (!key)
			return why_set(r->w, -ENOMEM, "out of memory");
		snprintf(where, sizeof(where), "pools[\"%.60s\"]: ", key);
		rd_ws(r);
		if (r->p >= r->end)
			return rd_fail(r, "unexpected end of JSON input");
		if (*r->p != '{')
			return why_set(r->w, -EINVAL, "%sexpected an object, got %s", where, rd_type(r));
		ret = rd_open(r, '{');
		while (ret >= 0 && (ret = rd_member(r, &k)) > 0) {
			if (strcmp(r->str.data, "lastReservedIP") == 0)
				ret = rd_ip_value(r, where, "lastReservedIP", &has, &ip);
			else if (strcmp(r->str.data, "entries") == 0)
				return RD_REFERENCE;
			else
				ret = rd_skip(r);
		}
		if (ret < 0)
			return ret;
		ret = pool_set_last(s, key, has, &ip, r->w);
	}
	return ret;
}

/* The members of an allocation, in the order serialize() writes them. */
static const char *const alloc_fields[] = {
	"pool",	   "ip",	   "containerID", "ifname", "network",
	"podNamespace", "podName", "podUID",	     "deviceID", "created",
};

enum {
	FIELD_POOL,
	FIELD_IP,
	FIELD_CONTAINER_ID,
	FIELD_IFNAME,
	FIELD_NETWORK,
	FIELD_POD_NAMESPACE,
	FIELD_POD_NAME,
	FIELD_POD_UID,
	FIELD_DEVICE_ID,
	FIELD_CREATED,
	FIELD_REQUIRED = (1u << FIELD_POOL) | (1u << FIELD_IP) | (1u << FIELD_CONTAINER_ID) |
			 (1u << FIELD_IFNAME),
};

/* Index of the member named r->str in alloc_fields, trying the one after @prev first. */
static size_t alloc_field(const struct rd *r, size_t prev)
{
	size_t next = prev + 1 < ARRAY_SIZE(alloc_fields) ? prev + 1 : 0;

	if (strcmp(r->str.data, alloc_fields[next]) == 0)
		return next;
	for (size_t f = 0; f < ARRAY_SIZE(alloc_fields); f++)
		if (strcmp(r->str.data, alloc_fields[f]) == 0)
			return f;
	return ARRAY_SIZE(alloc_fields);
}

/* "<name>[<i>]: " without snprintf(), which is measurable once per allocation. */
static void where_index(char *buf, size_t size, const char *name, size_t i)
{
	char digits[24];
	size_t n = 0, len = strlen(name);

	do {
		digits[n++] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	if (len + n + 4 > size) {
		buf[0] = '\0';
		return;
	}
	memcpy(buf, name, len);
	buf[len++] = '[';
	while (n)
		buf[len++] = digits[--n];
	memcpy(buf + len, "]: ", 4);
}

static int rd_allocation(struct rd *r, size_t idx, struct buf *strs, struct nvipam_alloc *ret)
{
	struct nvipam_alloc a = { 0 };
	size_t off[ARRAY_SIZE(alloc_fields)] = { 0 };
	size_t f = ARRAY_SIZE(alloc_fields) - 1;
	unsigned int seen = 0;
	bool has_ip = false;
	char where[48];
	size_t i = 0;
	int ret_r;

	where_index(where, sizeof(where), "allocations", idx);
	rd_ws(r);
	if (r->p >= r->end)
		return rd_fail(r, "unexpected end of JSON input");
	if (*r->p != '{')
		return why_set(r->w, -EINVAL, "%sexpected an object, got %s", where, rd_type(r));
	strs->len = 0;
	buf_putc(strs, '\0'); /* offset 0: the "" of absent members */
	ret_r = rd_open(r, '{');
	while (ret_r >= 0 && (ret_r = rd_member(r, &i)) > 0) {
		size_t field = alloc_field(r, f);
		int x;

		if (field == ARRAY_SIZE(alloc_fields)) {
			ret_r = rd_skip(r);
			continue;
		}
		f = field;
		if (seen & (1u << f))
			return why_set(r->w, -EINVAL, "%sfield \"%s\" appears twice", where,
				       alloc_fields[f]);
		if (f == FIELD_IP) {
			ret_r = rd_ip_value(r, where, "ip", &has_ip, &a.ip);
			if (has_ip)
				seen |= 1u << f;
			continue;
		}
		x = rd_str_value(r, where, alloc_fields[f]);
		if (x <= 0) {
			ret_r = x;
			continue;
		}
		seen |= 1u << f;
		if (f == FIELD_CREATED) {
			if (rfc3339_parse(r->str.data, &a.created) < 0)
				return why_set(r->w, -EINVAL, "%sfield \"created\": \"%s\" is not an "
					       "RFC 3339 time", where, r->str.data);
			continue;
		}
		off[f] = strs->len;
		buf_add(strs, r->str.data, r->str.len + 1);
	}
	if (ret_r < 0)
		return ret_r;
	if (strs->oom)
		return why_set(r->w, -ENOMEM, "out of memory");
	for (size_t k = 0; k < ARRAY_SIZE(alloc_fields); k++)
		if ((FIELD_REQUIRED & ~seen) & (1u << k))
			return why_set(r->w, -EINVAL, "%sfield \"%s\" is missing", where,
				       alloc_fields[k]);
	if (!strs->data[off[FIELD_POOL]])
		return why_set(r->w, -EINVAL, "%sfield \"pool\" is empty", where);
	/* Absent members have offset 0: the "" at the start. */
	a.pool = strs->data + off[FIELD_POOL];
	a.container_id = strs->data + off[FIELD_CONTAINER_ID];
	a.ifname = strs->data + off[FIELD_IFNAME];
	a.network = strs->data + off[FIELD_NETWORK];
	a.pod_namespace = strs->data + off[FIELD_POD_NAMESPACE];
	a.pod_name = strs->data + off[FIELD_POD_NAME];
	a.pod_uid = strs->data + off[FIELD_POD_UID];
	a.device_id = strs->data + off[FIELD_DEVICE_ID];
	if (alloc_copy(ret, &a) < 0)
		return why_set(r->w, -ENOMEM, "out of memory");
	return 0;
}

static int rd_allocations(struct rd *r, struct nvipam_store *s)
{
	_cleanup_free_ char *strs_data = NULL;
	struct buf strs = { 0 };
	size_t i = 0;
	int ret;

	if (rd_null(r))
		return 0;
	rd_ws(r);
	if (r->p >= r->end)
		return rd_fail(r, "unexpected end of JSON input");
	if (*r->p != '[')
		return why_set(r->w, -EINVAL, "field \"allocations\": expected an array, got %s",
			       rd_type(r));
	ret = rd_open(r, '[');
	while (ret >= 0 && (ret = rd_element(r, &i)) > 0) {
		if (s->n_allocs == s->cap_allocs) {
			/* The average allocation takes ~300 bytes: one realloc in most stores. */
			size_t want = s->cap_allocs ? s->cap_allocs * 2 :
						      (size_t)(r->end - r->p) / 256 + 16;
			struct nvipam_alloc *v = realloc(s->allocs, want * sizeof(*v));

			if (!v) {
				ret = why_set(r->w, -ENOMEM, "out of memory");
				break;
			}
			s->allocs = v;
			s->cap_allocs = want;
		}
		ret = rd_allocation(r, i - 1, &strs, &s->allocs[s->n_allocs]);
		strs_data = strs.data;
		if (ret < 0)
			break;
		s->n_allocs++;
	}
	return ret;
}

/* Read our format into @s. Return: 0, RD_REFERENCE, or negative errno with @w filled. */
static int parse_ours(const char *data, size_t len, struct nvipam_store *s, struct why *w)
{
	struct rd r = { .start = data, .p = data, .end = data + len, .w = w };
	bool version = false;
	size_t i = 0;
	int ret;

	rd_ws(&r);
	if (r.p < r.end && *r.p != '{')
		return why_set(w, -EINVAL, "expected an object, got %s", rd_type(&r));
	ret = rd_open(&r, '{');
	while (ret >= 0 && (ret = rd_member(&r, &i)) > 0) {
		const char *key = r.str.data;

		if (strcmp(key, "version") == 0) {
			ret = rd_version(&r);
			version = true;
			continue;
		}
		if (strcmp(key, "checksum") == 0) {
			ret = RD_REFERENCE;
			break;
		}
		if (!version && i == 1) {
			/* Not written by us: learn the version before trusting the layout. */
			ret = rd_prescan(data, len, w);
			if (ret != 0)
				break;
			version = true;
		}
		if (strcmp(key, "pools") == 0)
			ret = rd_pools(&r, s);
		else if (strcmp(key, "allocations") == 0)
			ret = rd_allocations(&r, s);
		else
			ret = rd_skip(&r);
		if (ret == RD_REFERENCE)
			break;
	}
	free(r.str.data);
	if (ret != 0)
		return ret;
	if (!version)
		return why_set(w, -EINVAL, "field \"version\" is missing");
	rd_ws(&r);
	if (r.p != r.end)
		return rd_fail(&r, "invalid character after top-level value");
	return 0;
}

/* ---- the reference daemon's format ---- */

/*
 * Go's json.Marshal of a string field decoded from @obj[@key] (absent or null: ""),
 * after type checks done by the caller.
 */
static void go_put_str_member(struct buf *b, const char *name, struct json_object *obj,
			      const char *key, bool first)
{
	struct json_object *v = cjson_get(obj, key);

	if (!first)
		buf_putc(b, ',');
	buf_put_json_str(b, name, true);
	buf_putc(b, ':');
	buf_put_json_str(b, v ? json_object_get_string(v) : "", true);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The keys of @obj sorted as Go sorts map keys (bytewise); NULL only when out of memory. */
static const char **sorted_keys(struct json_object *obj, size_t *ret_n)
{
	size_t n = (size_t)json_object_object_length(obj), i = 0;
	const char **v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (struct json_object_iterator it = json_object_iter_begin(obj),
					 end = json_object_iter_end(obj);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		v[i++] = json_object_iter_peek_name(&it);
	qsort(v, n, sizeof(*v), cmp_str);
	*ret_n = n;
	return v;
}

/*
 * The reference document as Go's encoding/json writes it for the daemon's types, with
 * "checksum":0 and "released_at" dropped (the daemon's checksum zeroes both), unknown members
 * dropped and maps sorted. Every member was type-checked before. IPs are written as found:
 * a file the daemon wrote holds them as Go prints them.
 */
static int go_marshal_reference(struct json_object *root, int64_t version, struct buf *b)
{
	_cleanup_free_ const char **pkeys = NULL;
	struct json_object *pools = cjson_get(root, "pools");
	char num[32];
	size_t np;

	snprintf(num, sizeof(num), "%" PRId64, version);
	buf_puts(b, "{\"version\":");
	buf_puts(b, num);
	buf_puts(b, ",\"checksum\":0,\"pools\":");
	if (!pools) {
		buf_puts(b, "null}");
		return 0;
	}
	pkeys = sorted_keys(pools, &np);
	if (!pkeys)
		return -ENOMEM;
	buf_putc(b, '{');
	for (size_t i = 0; i < np; i++) {
		_cleanup_free_ const char **ekeys = NULL;
		struct json_object *pool = cjson_get(pools, pkeys[i]);
		struct json_object *entries = cjson_get(pool, "entries");
		size_t ne;

		if (i)
			buf_putc(b, ',');
		buf_put_json_str(b, pkeys[i], true);
		buf_puts(b, ":{");
		go_put_str_member(b, "name", pool, "name", true);
		buf_puts(b, ",\"entries\":");
		if (!entries) {
			buf_puts(b, "null");
		} else {
			ekeys = sorted_keys(entries, &ne);
			if (!ekeys)
				return -ENOMEM;
			buf_putc(b, '{');
			for (size_t k = 0; k < ne; k++) {
				struct json_object *e = cjson_get(entries, ekeys[k]);
				struct json_object *md = cjson_get(e, "metadata");

				if (k)
					buf_putc(b, ',');
				buf_put_json_str(b, ekeys[k], true);
				buf_puts(b, ":{");
				go_put_str_member(b, "container_id", e, "container_id", true);
				go_put_str_member(b, "interface_name", e, "interface_name", false);
				go_put_str_member(b, "ip_address", e, "ip_address", false);
				buf_puts(b, ",\"metadata\":{");
				go_put_str_member(b, "create_time", md, "create_time", true);
				go_put_str_member(b, "pod_uuid", md, "pod_uuid", false);
				go_put_str_member(b, "pod_name", md, "pod_name", false);
				go_put_str_member(b, "pod_namespace", md, "pod_namespace", false);
				go_put_str_member(b, "device_id", md, "device_id", false);
				go_put_str_member(b, "pool_config_snapshot", md, "pool_config_snapshot",
						  false);
				buf_puts(b, "}}");
			}
			buf_putc(b, '}');
		}
		go_put_str_member(b, "last_pool_config", pool, "last_pool_config", false);
		go_put_str_member(b, "last_reserved_ip", pool, "last_reserved_ip", false);
		buf_putc(b, '}');
	}
	buf_puts(b, "}}");
	return 0;
}

static uint32_t fnv1a32(const char *data, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)data[i];
		h *= 16777619u;
	}
	return h;
}

static int parse_reference_entry(struct json_object *e, const char *pool_key, const char *where,
				 struct nvipam_store *s, struct why *w)
{
	struct json_object *md = NULL, *unused = NULL;
	struct nvipam_alloc a = { .pool = (char *)pool_key, .network = (char *)"" };
	const char *snapshot;
	bool has;
	int r;

	if (!json_object_is_type(e, json_type_object))
		return why_set(w, -EINVAL, "%s: expected an object, got %s", where, cjson_type_name(e));
	if ((r = get_str(e, "container_id", (const char **)&a.container_id, w)) < 0 ||
	    (r = get_str(e, "interface_name", (const char **)&a.ifname, w)) < 0 ||
	    (r = get_ip(e, "ip_address", true, &has, &a.ip, w)) < 0 ||
	    (r = cjson_get_typed(e, "metadata", json_type_object, &md, &w->e)) < 0 ||
	    /* newer daemons keep released entries for a cooldown; they still hold their IP */
	    (r = cjson_get_typed(e, "released_at", json_type_string, &unused, &w->e)) < 0 ||
	    (r = get_str(md, "pod_uuid", (const char **)&a.pod_uid, w)) < 0 ||
	    (r = get_str(md, "pod_name", (const char **)&a.pod_name, w)) < 0 ||
	    (r = get_str(md, "pod_namespace", (const char **)&a.pod_namespace, w)) < 0 ||
	    (r = get_str(md, "device_id", (const char **)&a.device_id, w)) < 0 ||
	    (r = get_str(md, "pool_config_snapshot", &snapshot, w)) < 0 ||
	    (r = get_time(md, "create_time", &a.created, w)) < 0)
		return why_at(w, r, where);
	/* The snapshot is only type-checked: our pool file is the truth about ranges now. */
	r = store_push(s, &a);
	if (r < 0)
		return why_set(w, r, "out of memory");
	return 0;
}

/* Type-check the daemon's pool records and count their entries. */
static int reference_check_pools(struct json_object *pools, size_t *ret_total, struct why *w)
{
	size_t total = 0;
	char where[96];
	int r;

	for (struct json_object_iterator it = json_object_iter_begin(pools),
					 end = json_object_iter_end(pools);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *key = json_object_iter_peek_name(&it);
		struct json_object *pool = json_object_iter_peek_value(&it);
		struct json_object *entries = NULL;
		const char *str;

		snprintf(where, sizeof(where), "pools[\"%.60s\"]", key);
		if (!json_object_is_type(pool, json_type_object))
			return why_set(w, -EINVAL, "%s: expected an object, got %s", where,
				       cjson_type_name(pool));
		if ((r = get_str(pool, "name", &str, w)) < 0 ||
		    (r = get_str(pool, "last_pool_config", &str, w)) < 0 ||
		    (r = get_str(pool, "last_reserved_ip", &str, w)) < 0 ||
		    (r = cjson_get_typed(pool, "entries", json_type_object, &entries, &w->e)) < 0)
			return why_at(w, r, where);
		if (entries)
			total += (size_t)json_object_object_length(entries);
	}
	*ret_total = total;
	return 0;
}

static int reference_convert_pools(struct json_object *pools, struct nvipam_store *s,
				   struct why *w)
{
	char where[300];
	int r;

	for (struct json_object_iterator it = json_object_iter_begin(pools),
					 end = json_object_iter_end(pools);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *pkey = json_object_iter_peek_name(&it);
		struct json_object *pool = json_object_iter_peek_value(&it);
		struct json_object *entries = cjson_get(pool, "entries");
		bool has = false;
		struct ip_addr ip;

		snprintf(where, sizeof(where), "pools[\"%.60s\"]", pkey);
		r = get_ip(pool, "last_reserved_ip", false, &has, &ip, w);
		if (r < 0)
			return why_at(w, r, where);
		r = pool_set_last(s, pkey, has, &ip, w);
		if (r < 0)
			return r;
		if (!entries)
			continue;
		for (struct json_object_iterator eit = json_object_iter_begin(entries),
						 eend = json_object_iter_end(entries);
		     !json_object_iter_equal(&eit, &eend); json_object_iter_next(&eit)) {
			snprintf(where, sizeof(where), "pools[\"%.60s\"].entries[\"%.200s\"]", pkey,
				 json_object_iter_peek_name(&eit));
			r = parse_reference_entry(json_object_iter_peek_value(&eit), pkey, where, s, w);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int parse_reference(struct json_object *root, struct nvipam_store *s, struct why *w)
{
	_cleanup_free_ char *go = NULL;
	struct json_object *pools = NULL;
	struct buf b = { 0 };
	int64_t version, checksum = 0;
	size_t total = 0;
	uint32_t sum;
	int r;

	r = cjson_get_int(root, "version", INT64_MIN, INT64_MAX, &version, &w->e);
	if (r == 0)
		return why_set(w, -EINVAL, "field \"version\" is missing");
	if (r < 0)
		return r;
	if (version != 1)
		return why_set(w, -EPROTONOSUPPORT,
			       "unsupported nv-ipam daemon store version %" PRId64 " (reads 1)", version);
	r = cjson_get_int(root, "checksum", 0, UINT32_MAX, &checksum, &w->e);
	if (r < 0)
		return r;
	/* The daemon refuses to start on this; so do we rather than trust the file. */
	if (checksum == 0)
		return why_set(w, -EINVAL, "checksum not set in store file");
	r = cjson_get_typed(root, "pools", json_type_object, &pools, &w->e);
	if (r < 0)
		return r;
	if (pools) {
		r = reference_check_pools(pools, &total, w);
		if (r < 0)
			return r;
	}

	if (total) {
		s->allocs = calloc(total, sizeof(*s->allocs));
		if (!s->allocs)
			return why_set(w, -ENOMEM, "out of memory");
		s->cap_allocs = total;
	}
	if (pools) {
		r = reference_convert_pools(pools, s, w);
		if (r < 0)
			return r;
	}
	r = go_marshal_reference(root, version, &b);
	go = b.data;
	if (r < 0 || b.oom)
		return why_set(w, -ENOMEM, "out of memory");
	sum = fnv1a32(b.data, b.len);
	if (sum != (uint32_t)checksum)
		return why_set(w, -EINVAL, "checksum mismatch (recorded %" PRId64 ", computed %" PRIu32 ")",
			       checksum, sum);

	/* Rewrite in our format on the next commit. */
	s->dirty = true;
	return 0;
}

/* ---- loading ---- */

/* Read the whole file; a missing file is ret_len 0. Return: 0, or negative errno. */
static int read_file(const struct nvipam_store *s, char **ret, size_t *ret_len,
		     struct cni_err *err)
{
	int r = file_read_at(s->dir_fd, s->name, STORE_MAX_BYTES, ret, ret_len);

	if (r == -ENOENT) {
		*ret = NULL;
		*ret_len = 0;
		return 0;
	}
	if (r == -EISDIR || r == -EINVAL || r == -ELOOP)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read store file %s: not a regular file",
				   s->path);
	if (r == -EFBIG)
		return cni_err_set(err, CNI_ERR_IO, r, "store file %s is corrupt: larger than %u bytes",
				   s->path, STORE_MAX_BYTES);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read store file %s: %s", s->path,
				   strerror(-r));
	return 0;
}

static int store_load(struct nvipam_store *s, bool allow_dups, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	_cleanup_free_ char *data = NULL;
	const struct nvipam_alloc *dup = NULL;
	struct why w = { 0 };
	size_t len = 0;
	int r;

	r = read_file(s, &data, &len, err);
	if (r < 0)
		return r;
	if (len == 0)
		return 0;
	if (memchr(data, '\0', len)) {
		r = why_set(&w, -EINVAL, "NUL byte in file");
	} else {
		r = parse_ours(data, len, s, &w);
		if (r == RD_REFERENCE) {
			/* Read once, when migrating: json-c and the typed getters will do. */
			store_free_data(s);
			r = parse_json(data, len, &root, &w);
			if (r >= 0)
				r = parse_reference(root, s, &w);
		}
	}
	if (r >= 0 && !allow_dups) {
		r = find_duplicate_ip(s, &dup);
		if (r < 0) {
			why_set(&w, r, "out of memory");
		} else if (r > 0) {
			char ip[IP_PREFIX_STRLEN];

			r = why_set(&w, -EINVAL, "IP %s is held twice in pool \"%s\"",
				    ip_addr_format(&dup->ip, ip, sizeof(ip)), dup->pool);
		}
	}
	if (r >= 0)
		return 0;
	if (r == -ENOMEM)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (r == -EPROTONOSUPPORT)
		return cni_err_set(err, CNI_ERR_IO, r, "store file %s has an %s", s->path, w.e.msg);
	return cni_err_set(err, CNI_ERR_IO, r, "store file %s is corrupt: %s", s->path, w.e.msg);
}

/* ---- locking ---- */

static int64_t now_us(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int lock_take(const struct nvipam_store *s, unsigned int timeout_ms, int *ret_fd,
		     struct cni_err *err)
{
	_cleanup_free_ char *lock_name = NULL;
	_cleanup_close_ int fd = -1;
	int64_t deadline = now_us() + (int64_t)timeout_ms * 1000;
	int64_t backoff_us = 1000;
	struct stat st;

	if (asprintf(&lock_name, "%s.lock", s->name) < 0) {
		lock_name = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	/* A link planted in place of the lock must not make root create a file elsewhere. */
	fd = openat(s->dir_fd, lock_name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0 || fstat(fd, &st) < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot open store lock %s.lock: %s", s->path,
				   errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cni_err_set(err, CNI_ERR_IO, -EINVAL,
				   "cannot open store lock %s.lock: not a regular file", s->path);
	for (;;) {
		struct timespec ts;
		int64_t left, us;

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return cni_err_set(err, CNI_ERR_IO, -errno, "cannot lock %s.lock: %s", s->path,
					   strerror(errno));
		left = deadline - now_us();
		if (left <= 0)
			return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EAGAIN,
					   "store %s is locked by another process (waited %u ms)", s->path,
					   timeout_ms);
		/* Poll: flock() has no timeout, and a blocking wait cannot be bounded without a signal. */
		us = backoff_us < left ? backoff_us : left;
		ts = (struct timespec){ .tv_sec = (time_t)(us / 1000000), .tv_nsec = (long)(us % 1000000) * 1000 };
		(void)nanosleep(&ts, NULL);
		if (backoff_us < LOCK_BACKOFF_MAX_MS * 1000)
			backoff_us += 1000;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

/*
 * The store's directory, opened once: everything after is relative to it. A
 * path from a network config is opened beneath the node's state directory
 * (trust.h), created when missing; the operator's own path as it is named.
 * Either way only root may be able to change what the directory holds, or
 * anyone who can would decide what root reads, writes and removes there.
 */
static int dir_open(struct nvipam_store *s, bool confined, struct cni_err *err)
{
	_cleanup_free_ char *dir = strdup(s->path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	struct stat st;
	int r;

	if (!dir)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (!slash || !slash[1])
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "store file %s: must be an absolute path to a file", s->path);
	s->name = s->path + (slash - dir) + 1;
	if (slash == dir)
		slash++;
	*slash = '\0';
	if (confined) {
		r = trust_open_dir(TRUST_STATE, "storeFile", dir, true, &s->dir_fd, err);
		if (r == -ENOENT)
			return cni_err_set(err, CNI_ERR_IO, r, "cannot open the directory of store %s: %s",
					   s->path, strerror(-r));
		if (r < 0)
			return r;
	} else {
		s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->dir_fd < 0)
			return cni_err_set(err, CNI_ERR_IO, -errno, "cannot open the directory of store %s: %s",
					   s->path, strerror(errno));
	}
	r = file_dir_check_private(s->dir_fd);
	if (r == -EPERM && fstat(s->dir_fd, &st) == 0)
		return cni_err_set(err, CNI_ERR_IO, r,
				   "store directory %s is not safe: it must be owned by root and "
				   "writable by no one else (owner uid %u, mode %04o)", dir,
				   (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot check store directory %s: %s", dir,
				   strerror(-r));
	return 0;
}

/* ---- public API ---- */

static int store_open(const char *path, bool confined, unsigned int timeout_ms, bool allow_dups,
		      struct nvipam_store *ret, struct cni_err *err)
{
	struct nvipam_store s = { .lock_fd = -1, .dir_fd = -1 };
	int r;

	if (!path || !*path)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "no store file given");
	s.path = strdup(path);
	if (!s.path)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = dir_open(&s, confined, err);
	if (r >= 0)
		r = lock_take(&s, timeout_ms, &s.lock_fd, err);
	if (r >= 0) {
		/* The lock is ours: a "<name>.tmp.*" is a killed writer's. */
		file_sweep_temps_at(s.dir_fd, s.name);
		r = store_load(&s, allow_dups, err);
	}
	if (r < 0) {
		nvipam_store_close(&s);
		return r;
	}
	*ret = s;
	return 0;
}

int nvipam_store_open(const char *path, bool confined, unsigned int timeout_ms,
		      struct nvipam_store *ret, struct cni_err *err)
{
	return store_open(path, confined, timeout_ms, false, ret, err);
}

int nvipam_store_open_inspect(const char *path, unsigned int timeout_ms, struct nvipam_store *ret,
			      struct cni_err *err)
{
	return store_open(path, false, timeout_ms, true, ret, err);
}

static void serialize(const struct nvipam_store *s, struct buf *b)
{
	buf_reserve(b, 64 + s->n_pools * 64 + s->n_allocs * 320);
	buf_puts(b, "{\"version\":1,\"pools\":{");
	for (size_t i = 0; i < s->n_pools; i++) {
		const struct nvipam_store_pool *p = &s->pools[i];

		if (i)
			buf_putc(b, ',');
		buf_put_json_str(b, p->key, false);
		buf_puts(b, ":{");
		if (p->has_last) {
			buf_puts(b, "\"lastReservedIP\":");
			buf_put_ip(b, &p->last_reserved);
		}
		buf_putc(b, '}');
	}
	buf_puts(b, "},\"allocations\":[");
	for (size_t i = 0; i < s->n_allocs; i++) {
		const struct nvipam_alloc *a = &s->allocs[i];

		if (i)
			buf_putc(b, ',');
		buf_puts(b, "{\"pool\":");
		buf_put_json_str(b, a->pool, false);
		buf_puts(b, ",\"ip\":");
		buf_put_ip(b, &a->ip);
		buf_puts(b, ",\"containerID\":");
		buf_put_json_str(b, a->container_id, false);
		buf_puts(b, ",\"ifname\":");
		buf_put_json_str(b, a->ifname, false);
		buf_puts(b, ",\"network\":");
		buf_put_json_str(b, a->network, false);
		buf_puts(b, ",\"podNamespace\":");
		buf_put_json_str(b, a->pod_namespace, false);
		buf_puts(b, ",\"podName\":");
		buf_put_json_str(b, a->pod_name, false);
		buf_puts(b, ",\"podUID\":");
		buf_put_json_str(b, a->pod_uid, false);
		buf_puts(b, ",\"deviceID\":");
		buf_put_json_str(b, a->device_id, false);
		buf_puts(b, ",\"created\":");
		buf_put_time(b, a->created);
		buf_putc(b, '}');
	}
	buf_puts(b, "]}\n");
}

int nvipam_store_commit(struct nvipam_store *s, struct cni_err *err)
{
	_cleanup_free_ char *data = NULL;
	struct buf b = { 0 };
	const char *step;
	int r;

	if (!s->dirty)
		return 0;
	serialize(s, &b);
	data = b.data;
	if (b.oom)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* We hold the lock, so a temporary file with our name is a dead writer's. */
	r = file_write_atomic_at(s->dir_fd, s->name, b.data, b.len, 0600, &step);
	if (r < 0 && strcmp(step, "sync directory") != 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write store file %s: %s: %s", s->path,
				   step, strerror(-r));
	/* The new contents are in place from here on, whatever the directory sync says. */
	s->dirty = false;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r,
				   "store file %s was replaced but its directory could not be synced: %s",
				   s->path, strerror(-r));
	return 0;
}

void nvipam_store_close(struct nvipam_store *s)
{
	if (!s)
		return;
	/* A zeroed store has lock_fd 0, which is not ours: only an opened store has a path. */
	if (s->path) {
		store_free_data(s);
		if (s->lock_fd >= 0)
			(void)close(s->lock_fd); /* releases the flock */
		if (s->dir_fd >= 0)
			(void)close(s->dir_fd);
		free(s->path);
	}
	*s = (struct nvipam_store){ .lock_fd = -1, .dir_fd = -1 };
}

static bool is_attachment(const struct nvipam_alloc *a, const char *pool, const char *container_id,
			  const char *ifname)
{
	return (!pool || strcmp(a->pool, pool) == 0) && strcmp(a->container_id, container_id) == 0 &&
	       strcmp(a->ifname, ifname) == 0;
}

struct nvipam_alloc *nvipam_store_find(struct nvipam_store *s, const char *pool,
				       const char *container_id, const char *ifname)
{
	for (size_t i = 0; i < s->n_allocs; i++)
		if (is_attachment(&s->allocs[i], pool, container_id, ifname))
			return &s->allocs[i];
	return NULL;
}

int nvipam_store_add(struct nvipam_store *s, const struct nvipam_alloc *a, bool round_robin)
{
	const char *pool = a->pool ? a->pool : "";
	struct nvipam_store_pool *p = NULL;
	struct nvipam_alloc *v;
	int r;

	/* What the loader would refuse must never be written. */
	if (!*pool || !ip_addr_size(&a->ip))
		return -EINVAL;
	for (size_t i = 0; i < s->n_allocs; i++)
		if (same_ip(&s->allocs[i].ip, &a->ip) && strcmp(s->allocs[i].pool, pool) == 0)
			return -EEXIST;
	if (round_robin) {
		r = pool_get(s, pool, &p);
		if (r < 0)
			return r;
	}
	if (s->n_allocs == s->cap_allocs) {
		/* Doubling: the operator tool and tests add thousands; one at a time is quadratic. */
		size_t want = s->cap_allocs ? s->cap_allocs * 2 : 16;

		v = realloc(s->allocs, want * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->allocs = v;
		s->cap_allocs = want;
	}
	r = alloc_copy(&s->allocs[s->n_allocs], a);
	if (r < 0)
		return r;
	s->n_allocs++;
	if (p) {
		p->has_last = true;
		p->last_reserved = a->ip;
	}
	s->dirty = true;
	return 0;
}

size_t nvipam_store_remove(struct nvipam_store *s, const char *pool, const char *container_id,
			   const char *ifname)
{
	size_t kept = 0, removed;

	/*
	 * Partition by swapping, freeing nothing until the end: the arguments may point into
	 * an allocation being removed (GC passes a->pool, a->container_id, a->ifname). Kept
	 * allocations keep their order.
	 */
	for (size_t i = 0; i < s->n_allocs; i++) {
		if (is_attachment(&s->allocs[i], pool, container_id, ifname))
			continue;
		if (i != kept) {
			struct nvipam_alloc t = s->allocs[kept];

			s->allocs[kept] = s->allocs[i];
			s->allocs[i] = t;
		}
		kept++;
	}
	removed = s->n_allocs - kept;
	for (size_t i = kept; i < s->n_allocs; i++)
		alloc_free_strings(&s->allocs[i]);
	s->n_allocs = kept;
	if (removed)
		s->dirty = true;
	return removed;
}

int nvipam_store_usage(const struct nvipam_store *s, const char *pool, struct ip_addr **ret_ips,
		       size_t *ret_n, bool *ret_has_last, struct ip_addr *ret_last)
{
	const struct nvipam_store_pool *p = pool_find(s, pool);
	struct ip_addr *ips;
	size_t n = 0;

	for (size_t i = 0; i < s->n_allocs; i++)
		if (strcmp(s->allocs[i].pool, pool) == 0)
			n++;
	ips = malloc((n ? n : 1) * sizeof(*ips));
	if (!ips)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < s->n_allocs; i++)
		if (strcmp(s->allocs[i].pool, pool) == 0)
			ips[n++] = s->allocs[i].ip;
	*ret_ips = ips;
	*ret_n = n;
	*ret_has_last = p && p->has_last;
	*ret_last = p && p->has_last ? p->last_reserved : (struct ip_addr){ 0 };
	return 0;
}

bool nvipam_store_drop_pool(struct nvipam_store *s, const char *pool)
{
	struct nvipam_store_pool *p = pool_find(s, pool);

	if (!p)
		return false;
	for (size_t i = 0; i < s->n_allocs; i++)
		if (strcmp(s->allocs[i].pool, pool) == 0)
			return false;
	free(p->key);
	memmove(p, p + 1, (size_t)(s->pools + s->n_pools - (p + 1)) * sizeof(*p));
	s->n_pools--;
	s->dirty = true;
	return true;
}
