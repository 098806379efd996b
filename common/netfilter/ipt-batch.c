/* iptables change sets: a table read once, its changes applied by one iptables-restore */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/netfilter/ipt-batch.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"

/* iptables' XT_EXTENSION_MAXNAMELEN, its NUL aside. */
#define CHAIN_NAME_MAX 28

struct ipt_batch {
	enum ipt_family f;
	char *table;
	char *listing;         /* "-S" of the table, one line each */
	struct text_buf script; /* the changes, restore lines */
	size_t changes;
	char **made;           /* chains "-N"'d here */
	size_t n_made;
	const char **sorted;   /* the listing's "-A" lines, sorted, for lookups by text */
	size_t n_sorted;
	bool indexed;
};

int ipt_batch_open(enum ipt_family f, const char *table, struct ipt_batch **ret,
		   struct cni_err *err)
{
	_cleanup_free_ char *listing = NULL;
	struct ipt_batch *b;
	int r;

	r = ipt_list(f, table, NULL, &listing, err);
	if (r < 0)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b || !(b->table = strdup(table))) {
		free(b);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	b->f = f;
	b->listing = TAKE_PTR(listing);
	*ret = b;
	return 0;
}

void ipt_batch_free(struct ipt_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_made; i++)
		free(b->made[i]);
	free(b->made);
	free(b->sorted);
	text_buf_free(&b->script);
	free(b->listing);
	free(b->table);
	free(b);
}

/*
 * Whether the listing has the line "@head @chain[ @rest]" ("-N CHAIN", "-A CHAIN ...");
 * a NULL @rest matches the line of the chain alone, "" any line of it ("-P CHAIN ACCEPT").
 */
static bool listed(const struct ipt_batch *b, const char *head, const char *chain,
		   const char *rest)
{
	size_t hl = strlen(head), cl = strlen(chain), rl = rest ? strlen(rest) : 0;

	for (const char *p = b->listing; *p;) {
		const char *nl = strchrnul(p, '\n');
		size_t len = (size_t)(nl - p);
		bool any = rest && !*rest;

		if ((any ? len > hl + 1 + cl : len == hl + 1 + cl + (rest ? 1 + rl : 0)) &&
		    memcmp(p, head, hl) == 0 && p[hl] == ' ' && memcmp(p + hl + 1, chain, cl) == 0 &&
		    (!rest || (p[hl + 1 + cl] == ' ' && memcmp(p + hl + 2 + cl, rest, rl) == 0)))
			return true;
		p = *nl ? nl + 1 : nl;
	}
	return false;
}

/* Whether a line "-A @chain ..." of the listing has " @text" as whole words. */
static bool chain_has_text(const struct ipt_batch *b, const char *chain, const char *text)
{
	size_t cl = strlen(chain), tl = strlen(text);

	for (const char *p = b->listing; *p;) {
		const char *nl = strchrnul(p, '\n');

		if (strncmp(p, "-A ", 3) == 0 && (size_t)(nl - p) > 3 + cl &&
		    memcmp(p + 3, chain, cl) == 0 && p[3 + cl] == ' ')
			for (const char *q = p + 3 + cl; q + 1 + tl <= nl; q++)
				if (*q == ' ' && memcmp(q + 1, text, tl) == 0 &&
				    (q + 1 + tl == nl || q[1 + tl] == ' '))
					return true;
		p = *nl ? nl + 1 : nl;
	}
	return false;
}

/* Lines compared up to their newline (or end). */
static int line_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		char ca = *a == '\n' ? '\0' : *a, cb = *b == '\n' ? '\0' : *b;

		if (ca != cb || !ca)
			return (unsigned char)ca - (unsigned char)cb;
	}
}

static int sort_cmp(const void *a, const void *b)
{
	return line_cmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * Whether the listing has "-A @chain @printed": the rules sorted once, each lookup a
 * binary search (a CHECK of thousands of mappings asks thousands of times).
 */
static bool rule_listed(struct ipt_batch *b, const char *chain, const char *printed)
{
	_cleanup_free_ char *line = NULL;
	size_t lo = 0, hi;

	if (!b->indexed) {
		size_t n = 0;

		for (const char *p = b->listing; *p; p = strchrnul(p, '\n'), p += *p == '\n')
			n += strncmp(p, "-A ", 3) == 0;
		b->sorted = calloc(n + 1, sizeof(*b->sorted));
		if (!b->sorted)
			return listed(b, "-A", chain, printed);
		for (const char *p = b->listing; *p; p = strchrnul(p, '\n'), p += *p == '\n')
			if (strncmp(p, "-A ", 3) == 0)
				b->sorted[b->n_sorted++] = p;
		qsort(b->sorted, b->n_sorted, sizeof(*b->sorted), sort_cmp);
		b->indexed = true;
	}
	if (asprintf(&line, "-A %s %s", chain, printed) < 0) {
		line = NULL;
		return listed(b, "-A", chain, printed);
	}
	hi = b->n_sorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = line_cmp(b->sorted[mid], line);

		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool made_here(const struct ipt_batch *b, const char *chain)
{
	for (size_t i = 0; i < b->n_made; i++)
		if (strcmp(b->made[i], chain) == 0)
			return true;
	return false;
}

bool ipt_batch_has_chain(const struct ipt_batch *b, const char *chain)
{
	/* Built-in chains are listed with their policy ("-P"), the others with "-N". */
	return made_here(b, chain) || listed(b, "-N", chain, NULL) || listed(b, "-P", chain, "");
}

bool ipt_chain_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > CHAIN_NAME_MAX || name[0] == '-' || name[0] == '!')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] <= ' ' || (unsigned char)name[i] >= 0x7f ||
		    name[i] == '"' || name[i] == '\'' || name[i] == '\\')
			return false;
	return true;
}

/* One argument of a restore line: quoted when it holds a blank, a quote or a backslash. */
static int put_arg(struct text_buf *t, const char *a)
{
	bool quote = *a == '\0' || strpbrk(a, " \t\"'\\") != NULL;

	for (const char *p = a; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return -EINVAL;
	text_buf_putc(t, ' ');
	if (!quote) {
		text_buf_puts(t, a);
		return 0;
	}
	text_buf_putc(t, '"');
	for (const char *p = a; *p; p++) {
		if (*p == '"' || *p == '\\')
			text_buf_putc(t, '\\');
		text_buf_putc(t, *p);
	}
	text_buf_putc(t, '"');
	return 0;
}

/* A change line: "@op @chain [@pos] ARGS...", taken back whole when an argument is refused. */
static int put_line(struct ipt_batch *b, const char *op, const char *chain, const char *pos,
		    const char *const *args, size_t n)
{
	size_t start = b->script.len;
	int r = 0;

	text_buf_puts(&b->script, op);
	r = put_arg(&b->script, chain);
	if (r >= 0 && pos)
		r = put_arg(&b->script, pos);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = put_arg(&b->script, args[i]);
	if (r < 0) {
		b->script.len = start;
		return r;
	}
	text_buf_putc(&b->script, '\n');
	if (b->script.oom)
		return -ENOMEM;
	b->changes++;
	return 0;
}

int ipt_batch_ensure_chain(struct ipt_batch *b, const char *chain)
{
	char **made;

	if (!ipt_chain_name_valid(chain))
		return -EINVAL;
	if (ipt_batch_has_chain(b, chain))
		return 0;
	made = reallocarray(b->made, b->n_made + 1, sizeof(*made));
	if (!made)
		return -ENOMEM;
	b->made = made;
	if (!(made[b->n_made] = strdup(chain)))
		return -ENOMEM;
	b->n_made++;
	return put_line(b, "-N", chain, NULL, NULL, 0);
}

int ipt_batch_add_rule(struct ipt_batch *b, const char *chain, bool first,
		       const char *const *rule, size_t n)
{
	return put_line(b, first ? "-I" : "-A", chain, first ? "1" : NULL, rule, n);
}

static bool jumps_to_new(const struct ipt_batch *b, const char *const *rule, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if ((strcmp(rule[i], "-j") == 0 || strcmp(rule[i], "--jump") == 0 ||
		     strcmp(rule[i], "-g") == 0 || strcmp(rule[i], "--goto") == 0) &&
		    made_here(b, rule[i + 1]))
			return true;
	return false;
}

/* Whether @v is one host's address as iptables prints it: inet_ntop's form, "/32" or "/128". */
static bool host_printed(const char *v)
{
	char addr[INET6_ADDRSTRLEN], back[INET6_ADDRSTRLEN];
	unsigned char bin[16];
	const char *slash = strchr(v, '/');
	size_t len = slash ? (size_t)(slash - v) : 0;
	int af;

	if (!slash || len >= sizeof(addr))
		return false;
	memcpy(addr, v, len);
	addr[len] = '\0';
	af = strchr(addr, ':') ? AF_INET6 : AF_INET;
	return strcmp(slash, af == AF_INET6 ? "/128" : "/32") == 0 &&
	       inet_pton(af, addr, bin) == 1 && inet_ntop(af, bin, back, sizeof(back)) &&
	       strcmp(back, addr) == 0;
}

/*
 * Whether the listing shows that a chain cannot hold a rule: the rule matches a host's
 * address ("-s" or "-d"), which "-S" prints as given, and no rule of the chain has it. A
 * pod's own rules are new at its ADD: no "-C" is asked for each of them.
 */
static bool absent_by_address(const struct ipt_batch *b, const char *chain,
			      const char *const *rule, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++) {
		const char *opt = rule[i];
		_cleanup_free_ char *rest = NULL;

		if (strcmp(opt, "--source") == 0)
			opt = "-s";
		else if (strcmp(opt, "--destination") == 0)
			opt = "-d";
		if ((strcmp(opt, "-s") != 0 && strcmp(opt, "-d") != 0) || !host_printed(rule[i + 1]))
			continue;
		if (asprintf(&rest, "%s %s", opt, rule[i + 1]) < 0) {
			rest = NULL;
			return false;
		}
		return !chain_has_text(b, chain, rest);
	}
	return false;
}

int ipt_batch_rule_exists(struct ipt_batch *b, const char *chain, const char *const *rule,
			  size_t n, const char *printed, struct cni_err *err)
{
	if (!ipt_batch_has_chain(b, chain))
		return 0;
	if (printed && rule_listed(b, chain, printed))
		return 1;
	if (absent_by_address(b, chain, rule, n))
		return 0;
	return ipt_rule_exists(b->f, b->table, chain, rule, n, err);
}

int ipt_batch_ensure_rule(struct ipt_batch *b, const char *chain, bool first,
			  const char *const *rule, size_t n, const char *printed,
			  struct cni_err *err)
{
	int r;

	/*
	 * A chain made here, or missing (the restore then fails), holds nothing to ask about;
	 * nor can a rule be there that jumps to a chain made here.
	 */
	if (!made_here(b, chain) && ipt_batch_has_chain(b, chain) && !jumps_to_new(b, rule, n)) {
		r = ipt_batch_rule_exists(b, chain, rule, n, printed, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	r = ipt_batch_add_rule(b, chain, first, rule, n);
	if (r < 0)
		return cni_err_set(err, r == -EINVAL ? CNI_ERR_INVALID_CONFIG : CNI_ERR_INTERNAL, r,
				   r == -EINVAL ? "an iptables argument holds a control character" :
						  "out of memory");
	return 1;
}

int ipt_batch_delete_rule(struct ipt_batch *b, const char *chain, const char *const *rule,
			  size_t n, const char *printed, struct cni_err *err)
{
	int r;

	/* Found as the listing prints it: deleted by that text, as the listing gave it. */
	if (printed && ipt_batch_has_chain(b, chain) && rule_listed(b, chain, printed)) {
		text_buf_puts(&b->script, "-D");
		if (put_arg(&b->script, chain) < 0 || strchr(printed, '\n'))
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "a rule of two lines");
		text_buf_putc(&b->script, ' ');
		text_buf_puts(&b->script, printed);
		text_buf_putc(&b->script, '\n');
		b->changes++;
		return b->script.oom ? cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory") : 1;
	}
	r = ipt_batch_rule_exists(b, chain, rule, n, printed, err);
	if (r <= 0)
		return r;
	r = put_line(b, "-D", chain, NULL, rule, n);
	if (r < 0)
		return cni_err_set(err, r == -EINVAL ? CNI_ERR_INVALID_CONFIG : CNI_ERR_INTERNAL, r,
				   r == -EINVAL ? "an iptables argument holds a control character" :
						  "out of memory");
	return 1;
}

int ipt_batch_delete_printed(struct ipt_batch *b, const char *line)
{
	if (strncmp(line, "-A ", 3) != 0 || strchr(line, '\n'))
		return -EINVAL;
	text_buf_puts(&b->script, "-D ");
	text_buf_puts(&b->script, line + 3);
	text_buf_putc(&b->script, '\n');
	if (b->script.oom)
		return -ENOMEM;
	b->changes++;
	return 0;
}

int ipt_batch_delete_chain(struct ipt_batch *b, const char *chain)
{
	int r;

	if (!listed(b, "-N", chain, NULL))
		return 0;
	r = put_line(b, "-F", chain, NULL, NULL, 0);
	if (r >= 0)
		r = put_line(b, "-X", chain, NULL, NULL, 0);
	return r < 0 ? r : 1;
}

int ipt_batch_rules(const struct ipt_batch *b, const char *chain,
		    int (*cb)(const char *line, void *data), void *data)
{
	size_t cl = strlen(chain);

	for (const char *p = b->listing; *p;) {
		const char *nl = strchrnul(p, '\n');
		size_t len = (size_t)(nl - p);

		if (len > 4 + cl && memcmp(p, "-A ", 3) == 0 && memcmp(p + 3, chain, cl) == 0 &&
		    p[3 + cl] == ' ') {
			_cleanup_free_ char *line = strndup(p, len);
			int r;

			if (!line)
				return -ENOMEM;
			r = cb(line, data);
			if (r < 0)
				return r;
		}
		p = *nl ? nl + 1 : nl;
	}
	return 0;
}

size_t ipt_batch_changes(const struct ipt_batch *b)
{
	return b->changes;
}

int ipt_batch_commit(struct ipt_batch *b, struct cni_err *err)
{
	struct text_buf s = { 0 };
	int r;

	if (b->changes == 0)
		return 0;
	text_buf_putc(&s, '*');
	text_buf_puts(&s, b->table);
	text_buf_putc(&s, '\n');
	text_buf_add(&s, b->script.data, b->script.len);
	text_buf_puts(&s, "COMMIT\n");
	text_buf_putc(&s, '\0');
	if (s.oom) {
		text_buf_free(&s);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	r = ipt_restore(b->f, s.data, err);
	text_buf_free(&s);
	return r;
}

int ipt_batch_apply(enum ipt_family f, const char *table,
		    int (*build)(struct ipt_batch *b, void *data, struct cni_err *err), void *data,
		    struct cni_err *err)
{
	int r = -EIO;

	for (int attempt = 1; attempt <= IPT_BATCH_ATTEMPTS; attempt++) {
		struct ipt_batch *b = NULL;
		struct cni_err e = { 0 };
		bool built;

		r = ipt_batch_open(f, table, &b, &e);
		if (r >= 0)
			r = build(b, data, &e);
		built = r >= 0;
		if (built)
			r = ipt_batch_commit(b, &e);
		ipt_batch_free(b);
		if (r >= 0)
			return 0;
		/* Only a refused restore is worth another read: another process made a chain. */
		if (!built || attempt == IPT_BATCH_ATTEMPTS || r != -EIO) {
			*err = e;
			break;
		}
	}
	return r;
}
