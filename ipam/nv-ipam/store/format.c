/* The pool log: one text file per pool, a header line and one line per change */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/format.h"

#define HEADER_MAGIC "nv-ipam-pool-log"
#define CHECK_DIGITS 16
/* The most fields a line has before its checksum: an A line. */
#define FIELDS_MAX 13

void store_format_stem(const char *key, char *buf)
{
	static const char hex[] = "0123456789ABCDEF";
	const size_t cut = STORE_FORMAT_STEM_MAX - 1 - 1 - CHECK_DIGITS;
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || (*p == '.' && o > 0);
		size_t need = plain ? 1 : 3;

		if (o + need > cut) {
			/* Too long to be readable in full: the cut stem and a hash of the whole key. */
			snprintf(buf + o, STORE_FORMAT_STEM_MAX - o, "~%016" PRIx64,
				 text_hash64(key, strlen(key), TEXT_HASH64_INIT));
			return;
		}
		if (plain) {
			buf[o++] = (char)*p;
		} else {
			buf[o++] = '%';
			buf[o++] = hex[*p >> 4];
			buf[o++] = hex[*p & 15];
		}
	}
	buf[o] = '\0';
}

static void put_check(struct text_buf *b, size_t start)
{
	char tail[CHECK_DIGITS + 3];

	if (b->oom)
		return;
	snprintf(tail, sizeof(tail), "\t%016" PRIx64 "\n", text_checksum64(b->data + start, b->len - start));
	text_buf_puts(b, tail);
}

static void put_field(struct text_buf *b, const char *s)
{
	text_buf_putc(b, '\t');
	if (s)
		text_buf_put_escaped(b, s, strlen(s));
}

static void put_txn(struct text_buf *b, uint64_t txn)
{
	char s[CHECK_DIGITS + 2];

	text_buf_putc(b, '\t');
	if (!txn)
		return;
	snprintf(s, sizeof(s), "%016" PRIx64, txn);
	text_buf_puts(b, s);
}

static void put_ip(struct text_buf *b, const struct ip_addr *ip)
{
	char s[IP_PREFIX_STRLEN];

	text_buf_putc(b, '\t');
	text_buf_puts(b, ip_addr_format(ip, s, sizeof(s)));
}

void store_format_header(struct text_buf *b, const char *key, uint64_t log_id)
{
	size_t start = b->len;
	char version[16];

	snprintf(version, sizeof(version), "%d", STORE_FORMAT_VERSION);
	text_buf_puts(b, HEADER_MAGIC);
	put_field(b, version);
	put_field(b, key);
	put_txn(b, log_id);
	put_check(b, start);
}

int store_format_add_fields(struct text_buf *b, const struct nvipam_alloc *a)
{
	size_t start = b->len;
	char created[RFC3339_STRLEN];

	put_ip(b, &a->ip);
	put_field(b, a->container_id);
	put_field(b, a->ifname);
	put_field(b, a->network);
	put_field(b, a->pod_namespace);
	put_field(b, a->pod_name);
	put_field(b, a->pod_uid);
	put_field(b, a->device_id);
	put_field(b, rfc3339_format(a->created, created));
	if (!b->oom && b->len - start > STORE_FORMAT_LINE_MAX) {
		b->len = start;
		return -E2BIG;
	}
	return 0;
}

static void put_flags(struct text_buf *b, unsigned int flags)
{
	char s[3] = { 0 }, *f = s;

	if (flags & STORE_ADD_ROUND_ROBIN)
		*f++ = 'r';
	if (flags & STORE_ADD_PENDING)
		*f++ = 'p';
	put_field(b, s);
}

size_t store_format_add_head_len(const struct store_line *line)
{
	/* "A", then a tab before each of flags, txn and partner; the end: STORE_FORMAT_LINE_END. */
	return 1 + 1 + !!(line->flags & STORE_ADD_ROUND_ROBIN) + !!(line->flags & STORE_ADD_PENDING) +
	       1 + (line->txn ? CHECK_DIGITS : 0) + 1 + strlen(line->partner) + STORE_FORMAT_LINE_END;
}

int store_format_line(struct text_buf *b, const struct store_line *line)
{
	const struct nvipam_alloc *a = &line->alloc;
	size_t start = b->len;
	int r = 0;

	text_buf_putc(b, line->type);
	switch (line->type) {
	case 'A':
		put_flags(b, line->flags);
		put_txn(b, line->txn);
		put_field(b, line->partner);
		if (line->fields)
			text_buf_add(b, line->fields, line->fields_len);
		else
			r = store_format_add_fields(b, a);
		break;
	case 'D':
		put_field(b, a->container_id);
		put_field(b, a->ifname);
		break;
	case 'L':
		put_ip(b, &a->ip);
		break;
	default: /* 'C', 'X' */
		put_txn(b, line->txn);
		break;
	}
	if (r >= 0)
		put_check(b, start);
	if (r < 0 || (!b->oom && b->len - start > STORE_FORMAT_LINE_MAX)) {
		b->len = start;
		return -E2BIG;
	}
	return 0;
}

static int fail(struct cni_err *err, const struct store_reader *r, const char *what)
{
	return cni_err_set(err, CNI_ERR_IO, -EINVAL, "line %zu: %s", r->line_no, what);
}

/* A line's fields: NUL-terminated in place, with their lengths. */
struct fields {
	char *s[FIELDS_MAX];
	size_t len[FIELDS_MAX];
	int n;
};

/* Exactly CHECK_DIGITS lowercase hex digits (what put_check() and put_txn() write). */
static bool hex64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;

	for (int i = 0; i < CHECK_DIGITS; i++) {
		int d = text_hex_digit(s[i]);

		/* Lowercase only: a line is written one way, and read back as written. */
		if (d < 0 || (s[i] >= 'A' && s[i] <= 'F'))
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*ret = v;
	return true;
}

/*
 * The next complete line, its checksum verified and its fields split (tabs become NULs).
 * Return: 1, 0 at the end (or before a torn tail), -EINVAL.
 */
static int next_line(struct store_reader *r, struct fields *f, struct cni_err *err)
{
	char *line = r->data + r->pos, *end, *p;
	size_t len = r->len - r->pos, n;
	uint64_t want;

	if (r->pos >= r->len)
		return 0;
	end = memchr(line, '\n', len);
	n = end ? (size_t)(end - line) : len;
	/*
	 * No writer writes a NUL (every string is escaped): a line holding one is space a
	 * power loss left unwritten, as unsynced lines written after it landed. Everything
	 * from it on was never synced (a sync writes all of the file before it), so it is a
	 * torn tail like a line without its newline, cut by the next writer.
	 */
	if (!end || memchr(line, '\0', n)) {
		r->torn = true;
		return 0;
	}
	r->line_no++;
	r->pos += n + 1;
	if (n > STORE_FORMAT_LINE_MAX)
		return fail(err, r, "longer than the longest line written");
	if (n < CHECK_DIGITS + 2 || line[n - CHECK_DIGITS - 1] != '\t' ||
	    !hex64(line + n - CHECK_DIGITS, &want))
		return fail(err, r, "no checksum");
	n -= CHECK_DIGITS + 1;
	if (text_checksum64(line, n) != want)
		return fail(err, r, "checksum mismatch (damaged or edited)");
	r->last_check = want;
	line[n] = '\0';
	f->n = 0;
	for (p = line;;) {
		char *tab = memchr(p, '\t', (size_t)(line + n - p));

		if (f->n == FIELDS_MAX)
			return fail(err, r, "too many fields");
		f->s[f->n] = p;
		f->len[f->n] = (size_t)((tab ? tab : line + n) - p);
		f->n++;
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	return 1;
}

static int field_str(const struct store_reader *r, const struct fields *f, int i, const char **ret,
		     struct cni_err *err)
{
	size_t len;

	if (text_unescape(f->s[i], f->len[i], &len) < 0)
		return fail(err, r, "invalid escape or character in a field");
	*ret = f->s[i];
	return 0;
}

static int field_txn(const struct store_reader *r, const struct fields *f, int i, bool required,
		     uint64_t *ret, struct cni_err *err)
{
	*ret = 0;
	if (!f->len[i] && !required)
		return 0;
	if (f->len[i] != CHECK_DIGITS || !hex64(f->s[i], ret) || !*ret)
		return fail(err, r, "invalid transaction");
	return 0;
}

/* IPv4 in dotted decimal without leading zeros (as written), else anything inet_pton() takes. */
static int field_ip(const struct store_reader *r, const struct fields *f, int i, struct ip_addr *ret,
		    struct cni_err *err)
{
	const char *p = f->s[i];
	struct ip_addr a = { .family = AF_INET };
	int k;

	for (k = 0; k < 4; k++) {
		unsigned int v = 0, digits = 0;

		while (*p >= '0' && *p <= '9' && digits < 4) {
			v = v * 10 + (unsigned int)(*p++ - '0');
			digits++;
		}
		if (!digits || v > 255 || (digits > 1 && p[-(int)digits] == '0') || *p != (k < 3 ? '.' : '\0'))
			break;
		a.bytes[k] = (uint8_t)v;
		p++;
	}
	if (k == 4) {
		*ret = a;
		return 0;
	}
	if (ip_addr_parse(f->s[i], ret) < 0)
		return fail(err, r, "invalid IP address");
	return 0;
}

int store_format_read_header(struct store_reader *r, char *data, size_t len, const char **ret_key,
			     uint64_t *ret_log_id, struct cni_err *err)
{
	struct cni_err field_err = { 0 };
	struct fields f;
	const char *key = NULL;
	int n;

	*r = (struct store_reader){ .data = data, .len = len };
	*ret_key = NULL;
	n = next_line(r, &f, err);
	if (n <= 0)
		return n;
	if (f.n != 4 || strcmp(f.s[0], HEADER_MAGIC) != 0)
		return fail(err, r, "not an nv-ipam pool log");
	if (strcmp(f.s[1], "1") != 0) {
		/* A version is named only when it is one: a number, never other bytes of the file. */
		const char *v = f.s[1];
		bool number = *v && strlen(v) <= 9 && strspn(v, "0123456789") == strlen(v);

		return cni_err_set(err, CNI_ERR_IO, -EPROTONOSUPPORT,
				   "unsupported pool log version%s%s (this plugin reads %d)",
				   number ? " " : "", number ? v : "", STORE_FORMAT_VERSION);
	}
	/* The field's own failure is said as what the field is. */
	if (field_str(r, &f, 2, &key, &field_err) < 0 || !key || !*key)
		return fail(err, r, "invalid pool key");
	if (field_txn(r, &f, 3, true, ret_log_id, &field_err) < 0)
		return fail(err, r, "invalid log id");
	*ret_key = key;
	return 0;
}

void store_format_read_tail(struct store_reader *r, char *data, size_t len, size_t line_no)
{
	*r = (struct store_reader){ .data = data, .len = len, .line_no = line_no };
}

int store_format_line_check(const char *data, size_t len, uint64_t *ret)
{
	if (len < CHECK_DIGITS + 2 || data[len - 1] != '\n' || data[len - CHECK_DIGITS - 2] != '\t' ||
	    !hex64(data + len - CHECK_DIGITS - 1, ret))
		return -EINVAL;
	return 0;
}

static int read_add(const struct store_reader *r, const struct fields *f, struct store_line *l,
		    struct cni_err *err)
{
	struct nvipam_alloc *a = &l->alloc;
	const char *flags = f->s[1], *created = NULL;
	int x;

	if (strcmp(flags, "") == 0)
		l->flags = 0;
	else if (strcmp(flags, "r") == 0)
		l->flags = STORE_ADD_ROUND_ROBIN;
	else if (strcmp(flags, "p") == 0)
		l->flags = STORE_ADD_PENDING;
	else if (strcmp(flags, "rp") == 0)
		l->flags = STORE_ADD_ROUND_ROBIN | STORE_ADD_PENDING;
	else
		return fail(err, r, "invalid flags");
	if ((x = field_txn(r, f, 2, false, &l->txn, err)) < 0 ||
	    (x = field_str(r, f, 3, &l->partner, err)) < 0 ||
	    (x = field_ip(r, f, 4, &a->ip, err)) < 0 ||
	    (x = field_str(r, f, 5, &a->container_id, err)) < 0 ||
	    (x = field_str(r, f, 6, &a->ifname, err)) < 0 ||
	    (x = field_str(r, f, 7, &a->network, err)) < 0 ||
	    (x = field_str(r, f, 8, &a->pod_namespace, err)) < 0 ||
	    (x = field_str(r, f, 9, &a->pod_name, err)) < 0 ||
	    (x = field_str(r, f, 10, &a->pod_uid, err)) < 0 ||
	    (x = field_str(r, f, 11, &a->device_id, err)) < 0 ||
	    (x = field_str(r, f, 12, &created, err)) < 0)
		return x;
	/* A pending line names its partner and transaction; nothing else names a partner. */
	if (!(l->flags & STORE_ADD_PENDING) != !*l->partner || ((l->flags & STORE_ADD_PENDING) && !l->txn))
		return fail(err, r, "invalid transaction");
	if (rfc3339_parse(created, &a->created) < 0)
		return fail(err, r, "invalid creation time");
	return 0;
}

int store_format_next(struct store_reader *r, struct store_line *ret, struct cni_err *err)
{
	struct store_line l = { .partner = "" };
	struct fields f;
	int n, want;

	n = next_line(r, &f, err);
	if (n <= 0)
		return n;
	if (f.len[0] != 1)
		return fail(err, r, "unknown kind of line");
	l.type = f.s[0][0];
	switch (l.type) {
	case 'A':
		want = 13;
		break;
	case 'D':
		want = 3;
		break;
	case 'L':
	case 'C':
	case 'X':
		want = 2;
		break;
	default:
		return fail(err, r, "unknown kind of line");
	}
	if (f.n != want)
		return fail(err, r, "wrong number of fields");
	switch (l.type) {
	case 'A':
		n = read_add(r, &f, &l, err);
		break;
	case 'D':
		if ((n = field_str(r, &f, 1, &l.alloc.container_id, err)) >= 0)
			n = field_str(r, &f, 2, &l.alloc.ifname, err);
		break;
	case 'L':
		n = field_ip(r, &f, 1, &l.alloc.ip, err);
		break;
	default:
		n = field_txn(r, &f, 1, true, &l.txn, err);
		break;
	}
	if (n < 0)
		return n;
	*ret = l;
	return 1;
}
