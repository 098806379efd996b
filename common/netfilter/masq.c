/* ipMasq: masquerading what a pod sends beyond its subnet, as upstream's pkg/ip does it */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/conf.h"
#include "common/netfilter/chainname.h"
#include "common/netfilter/iptables.h"
#include "common/netfilter/masq.h"
#include "common/netfilter/nft-list.h"
#include "common/netfilter/nft-rule.h"
#include "common/netfilter/nft.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/log.h"
#include "common/util/sha512.h"
#include "common/util/text.h"

/* knftables' CommentLengthMax: upstream cuts its rule comments there. */
#define NFT_COMMENT_CUT 128
/* "<16 hex digits>-<16 hex digits>": an attachment's rules, found by it. */
#define INSTANCE_LEN 33

DEFINE_CLEANUP_FUNC(nft_batch_freep, struct nft_batch *, nft_batch_free);
DEFINE_CLEANUP_FUNC(nft_rule_freep, struct nft_rule *, nft_rule_free);

int masq_backend_parse(const char *s, enum masq_backend *ret)
{
	if (!s)
		*ret = MASQ_DEFAULT;
	else if (strcmp(s, "iptables") == 0)
		*ret = MASQ_IPTABLES;
	else if (strcmp(s, "nftables") == 0)
		*ret = MASQ_NFTABLES;
	else
		return -EINVAL;
	return 0;
}

static void multicast(int family, struct ip_prefix *ret)
{
	(void)ip_prefix_parse(family == AF_INET ? "224.0.0.0/4" : "ff00::/8", ret);
}

/* --- nftables -------------------------------------------------------------------------- */

static int hash_network(const char *network, char buf[17])
{
	return sha512_name(16, "", network, buf, 17);
}

/* hashForInstance(): the network's hash, '-', the hash of "<ifname>:<container ID>". */
static int hash_instance(const struct masq_owner *o, char buf[INSTANCE_LEN + 1])
{
	_cleanup_free_ char *text = NULL;

	if (asprintf(&text, "%s:%s", o->ifname, o->container_id) < 0)
		return -ENOMEM;
	if (hash_network(o->network, buf) < 0)
		return -EINVAL;
	buf[16] = '-';
	return sha512_name(16, "", text, buf + 17, 17);
}

static void put_unquoted(struct text_buf *b, const char *s)
{
	for (; *s; s++)
		if (*s != '"')
			text_buf_putc(b, *s);
}

/* commentForInstance(): the hash, then who it is for, quotes dropped, cut to 128 bytes. */
static int comment_instance(const struct masq_owner *o, char buf[NFT_COMMENT_CUT + 1])
{
	char hash[INSTANCE_LEN + 1];
	struct text_buf b = { 0 };
	int r = hash_instance(o, hash);

	if (r < 0)
		return r;
	text_buf_puts(&b, hash);
	text_buf_puts(&b, ", net: ");
	put_unquoted(&b, o->network);
	text_buf_puts(&b, ", if: ");
	put_unquoted(&b, o->ifname);
	text_buf_puts(&b, ", id: ");
	put_unquoted(&b, o->container_id);
	if (b.oom) {
		text_buf_free(&b);
		return -ENOMEM;
	}
	snprintf(buf, NFT_COMMENT_CUT + 1, "%.*s", (int)(b.len < NFT_COMMENT_CUT ? b.len : NFT_COMMENT_CUT),
		 b.data);
	text_buf_free(&b);
	return 0;
}

/* A kernel without nf_tables: nothing of it to remove. */
static bool nft_missing(int r)
{
	return r == -EPROTONOSUPPORT || r == -EOPNOTSUPP || r == -EAFNOSUPPORT;
}

/* The rules of masq_checks, none when the table or chain is missing. */
static int nft_rules(struct nft_rule_list *ret, struct cni_err *err)
{
	int r = nft_list_rules(NFT_FAMILY_INET, MASQ_NFT_TABLE, MASQ_NFT_CHAIN, ret, err);

	if (r == -ENOENT) {
		*ret = (struct nft_rule_list){ 0 };
		return 0;
	}
	return r;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static int nft_delete_rules(struct nft_batch *b, const struct nft_rule_list *l, const char *prefix)
{
	for (size_t i = 0; i < l->n; i++)
		if (has_prefix(l->v[i].comment, prefix) &&
		    nft_batch_delete_rule(b, NFT_FAMILY_INET, MASQ_NFT_TABLE, MASQ_NFT_CHAIN,
					  l->v[i].handle) < 0)
			return -ENOMEM;
	return 0;
}

/* postrouting's three rules: multicast returns, everything else goes to masq_checks. */
static int nft_entry_rules(struct nft_batch *b)
{
	static const char *const table = MASQ_NFT_TABLE;
	const struct nft_chain_spec checks = {
		.name = MASQ_NFT_CHAIN,
		.comment = "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet",
	};
	const struct nft_chain_spec post = { .name = "postrouting", .type = "nat",
					     .hook = NFT_HOOK_POSTROUTING,
					     .priority = NFT_PRIORITY_SRCNAT };
	int r = nft_batch_add_table(b, NFT_FAMILY_INET, table,
				    "Masquerading for plugins from github.com/containernetworking/plugins");

	if (r >= 0)
		r = nft_batch_add_chain(b, NFT_FAMILY_INET, table, &checks);
	if (r >= 0)
		r = nft_batch_add_chain(b, NFT_FAMILY_INET, table, &post);
	if (r >= 0)
		r = nft_batch_flush_chain(b, NFT_FAMILY_INET, table, "postrouting");
	for (int i = 0; i < 3 && r >= 0; i++) {
		_cleanup_(nft_rule_freep) struct nft_rule *rule = NULL;
		struct ip_prefix mc;

		r = nft_rule_new(NFT_FAMILY_INET, &rule);
		if (r >= 0 && i < 2) {
			multicast(i == 0 ? AF_INET : AF_INET6, &mc);
			r = nft_match_addr(rule, true, &mc, false);
			if (r >= 0)
				r = nft_verdict(rule, NFT_VERDICT_RETURN, NULL);
		} else if (r >= 0) {
			r = nft_verdict(rule, NFT_VERDICT_GOTO, MASQ_NFT_CHAIN);
		}
		if (r >= 0)
			r = nft_batch_add_rule(b, table, "postrouting", rule);
	}
	return r;
}

/* "ip saddr == A ip daddr != A's subnet masquerade", with the attachment's comment. */
static int nft_masq_rule(struct nft_batch *b, const struct ip_prefix *a, const char *comment)
{
	_cleanup_(nft_rule_freep) struct nft_rule *rule = NULL;
	struct ip_prefix host = *a;
	int r = nft_rule_new(NFT_FAMILY_INET, &rule);

	host.len = a->addr.family == AF_INET ? 32 : 128;
	if (r >= 0)
		r = nft_match_addr(rule, false, &host, false);
	if (r >= 0)
		r = nft_match_addr(rule, true, a, true);
	if (r >= 0)
		r = nft_masquerade(rule, false);
	if (r >= 0)
		r = nft_rule_comment(rule, comment);
	if (r >= 0)
		r = nft_batch_add_rule(b, MASQ_NFT_TABLE, MASQ_NFT_CHAIN, rule);
	return r;
}

static int nft_setup(const struct masq_owner *o, const struct ip_prefix *addrs, size_t n,
		     struct cni_err *err)
{
	_cleanup_(nft_batch_freep) struct nft_batch *b = NULL;
	struct nft_rule_list stale = { 0 };
	char inst[INSTANCE_LEN + 1], comment[NFT_COMMENT_CUT + 1];
	int r;

	if (hash_instance(o, inst) < 0 || comment_instance(o, comment) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = nft_rules(&stale, err);
	if (r < 0)
		return r;
	r = nft_batch_new(&b);
	if (r >= 0)
		r = nft_entry_rules(b);
	if (r >= 0)
		r = nft_delete_rules(b, &stale, inst);
	for (size_t i = 0; i < n && r >= 0; i++)
		r = nft_masq_rule(b, &addrs[i], comment);
	nft_rule_list_free(&stale);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "nftables: cannot build the masquerade: %s",
				   strerror(-r));
	return nft_batch_commit(b, err);
}

/* Deletes the rules of masq_checks @keep() refuses among those whose comment has @prefix. */
static int nft_remove(const char *prefix, bool (*keep)(const char *comment, void *data), void *data,
		      struct cni_err *err)
{
	_cleanup_(nft_batch_freep) struct nft_batch *b = NULL;
	struct nft_rule_list l = { 0 };
	int r = nft_rules(&l, err);

	if (nft_missing(r))
		return 0;
	if (r < 0)
		return r;
	r = nft_batch_new(&b);
	for (size_t i = 0; i < l.n && r >= 0; i++) {
		const char *c = l.v[i].comment;

		if (has_prefix(c, prefix) && !(keep && keep(c, data)))
			r = nft_batch_delete_rule(b, NFT_FAMILY_INET, MASQ_NFT_TABLE, MASQ_NFT_CHAIN,
						  l.v[i].handle);
	}
	nft_rule_list_free(&l);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	return nft_batch_commit(b, err);
}

/* --- iptables ---------------------------------------------------------------------------- */

static enum ipt_family ipt_of(int family)
{
	return family == AF_INET6 ? IPT_IPV6 : IPT_IPV4;
}

/* A comment as "iptables -S" prints it: in double quotes, '"' and '\' escaped. */
static void put_quoted(struct text_buf *b, const char *s)
{
	text_buf_putc(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			text_buf_putc(b, '\\');
		text_buf_putc(b, *s);
	}
	text_buf_putc(b, '"');
}

/* What the nat table's listing says about one owner's chain. */
struct ipt_view {
	char chain[CHAINNAME_IPT_LEN + 1];
	char *comment;        /* ' -m comment --comment "..." ', as the listing prints it */
	const char *listing;  /* "iptables -t nat -S" (not owned) */
	bool exists;          /* "-N CHAIN" */
	bool foreign;         /* a rule in it, or a jump to it, that is not the owner's */
};

static void ipt_view_free(struct ipt_view *v)
{
	free(v->comment);
	v->comment = NULL;
}

/* The listing's lines in turn: @line points at each (not terminated), @len its length. */
static bool next_line(const char **p, const char **line, size_t *len)
{
	if (!**p)
		return false;
	*line = *p;
	*len = strcspn(*p, "\n");
	*p += *len + ((*p)[*len] == '\n');
	return true;
}

static bool line_has(const char *line, size_t len, const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(line + i, s, n) == 0)
			return true;
	return false;
}

static bool line_starts(const char *line, size_t len, const char *s)
{
	return len >= strlen(s) && memcmp(line, s, strlen(s)) == 0;
}

/* Whether a line ends with "-j CHAIN". */
static bool line_jumps(const char *line, size_t len, const char *chain)
{
	char tail[CHAINNAME_IPT_LEN + 8];
	size_t n = (size_t)snprintf(tail, sizeof(tail), " -j %s", chain);

	return len >= n && memcmp(line + len - n, tail, n) == 0;
}

/* Reads @listing for @chain, whose rules carry @comment_text when they are its owner's. */
static int ipt_view_parse(const char *listing, const char *chain, const char *comment_text,
			  struct ipt_view *v)
{
	struct text_buf b = { 0 };
	char n_line[CHAINNAME_IPT_LEN + 4], a_line[CHAINNAME_IPT_LEN + 5];
	const char *p, *line;
	size_t len;

	*v = (struct ipt_view){ .listing = listing };
	snprintf(v->chain, sizeof(v->chain), "%s", chain);
	text_buf_puts(&b, " -m comment --comment ");
	put_quoted(&b, comment_text);
	text_buf_putc(&b, ' ');
	text_buf_putc(&b, '\0');
	if (b.oom) {
		text_buf_free(&b);
		return -ENOMEM;
	}
	v->comment = b.data;
	snprintf(n_line, sizeof(n_line), "-N %s", chain);
	snprintf(a_line, sizeof(a_line), "-A %s ", chain);
	for (p = listing; next_line(&p, &line, &len);) {
		if (len == strlen(n_line) && line_starts(line, len, n_line))
			v->exists = true;
		else if ((line_starts(line, len, a_line) || line_jumps(line, len, chain)) &&
			 !line_has(line, len, v->comment))
			v->foreign = true;
	}
	return 0;
}

/* Whether @text (@len bytes) holds @line as a whole line. */
static bool has_line(const char *text, size_t len, const char *line)
{
	size_t n = strlen(line);

	for (size_t i = 0; i + n <= len; i++)
		if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, line, n) == 0 &&
		    (i + n == len || text[i + n] == '\n'))
			return true;
	return false;
}

/* Appends a rule line unless the listing or what is appended already holds it. */
static void put_rule(struct text_buf *b, const struct ipt_view *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void put_rule(struct text_buf *b, const struct ipt_view *v, const char *fmt, ...)
{
	_cleanup_free_ char *line = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (r < 0) {
		line = NULL;
		b->oom = true;
		return;
	}
	if (has_line(v->listing, strlen(v->listing), line) || has_line(b->data, b->len, line))
		return;
	text_buf_puts(b, line);
	text_buf_putc(b, '\n');
}

/*
 * SetupIPMasq() for one family: the chain, "-d <subnet> ACCEPT" and "! -d <multicast>
 * MASQUERADE" in it, a POSTROUTING jump per address, in upstream's order; the lines as
 * "iptables -S" prints them, so that a listing tells which are there already.
 */
static int ipt_setup_family(int family, const struct masq_owner *o, const char *chain,
			    const char *comment, const struct ip_prefix *addrs, size_t n,
			    struct cni_err *err)
{
	enum ipt_family f = ipt_of(family);
	_cleanup_free_ char *listing = NULL;
	struct ipt_view v = { 0 };
	struct text_buf b = { 0 };
	char mc[IP_PREFIX_STRLEN];
	struct ip_prefix m;
	int r;

	r = ipt_list(f, "nat", NULL, &listing, err);
	if (r >= 0 && (r = ipt_view_parse(listing, chain, comment, &v)) < 0)
		cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (r < 0)
		goto out;
	if (v.foreign) {
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EEXIST,
				"iptables chain nat %s is in use by rules that are not the masquerade "
				"of container %s in network %s: left alone", chain, o->container_id,
				o->network);
		goto out;
	}
	multicast(family, &m);
	ip_prefix_format(&m, mc, sizeof(mc));
	text_buf_puts(&b, "*nat\n");
	if (!v.exists) {
		text_buf_puts(&b, ":");
		text_buf_puts(&b, chain);
		text_buf_puts(&b, " - [0:0]\n");
	}
	for (size_t i = 0; i < n; i++) {
		struct ip_prefix net = ip_prefix_network(&addrs[i]);
		char a[IP_PREFIX_STRLEN], s[IP_PREFIX_STRLEN];

		if (addrs[i].addr.family != family)
			continue;
		put_rule(&b, &v, "-A %s -d %s%s-j ACCEPT", chain,
			 ip_prefix_format(&net, s, sizeof(s)), v.comment);
		put_rule(&b, &v, "-A %s ! -d %s%s-j MASQUERADE", chain, mc, v.comment);
		put_rule(&b, &v, "-A POSTROUTING -s %s/%u%s-j %s",
			 ip_addr_format(&addrs[i].addr, a, sizeof(a)), family == AF_INET ? 32 : 128,
			 v.comment, chain);
	}
	text_buf_puts(&b, "COMMIT\n");
	text_buf_putc(&b, '\0');
	if (b.oom) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto out;
	}
	/* "*nat\nCOMMIT\n": everything is there already. */
	r = strcmp(b.data, "*nat\nCOMMIT\n") == 0 ? 0 : ipt_restore(f, b.data, err);
out:
	text_buf_free(&b);
	ipt_view_free(&v);
	return r;
}

static int ipt_names(const char *network, const char *id, char chain[CHAINNAME_IPT_LEN + 1],
		     char *comment, size_t size, struct cni_err *err)
{
	if (chainname_ipt(network, id, "", chain) < 0 || chainname_comment(network, id, comment, size) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "cannot name the chain of %s", id);
	return 0;
}

static int ipt_setup(const struct masq_owner *o, const struct ip_prefix *addrs, size_t n,
		     struct cni_err *err)
{
	static const int families[] = { AF_INET, AF_INET6 };
	char chain[CHAINNAME_IPT_LEN + 1], comment[1024];
	int r = ipt_names(o->network, o->container_id, chain, comment, sizeof(comment), err);

	for (size_t k = 0; k < ARRAY_SIZE(families) && r >= 0; k++) {
		bool any = false;

		for (size_t i = 0; i < n; i++)
			any = any || addrs[i].addr.family == families[k];
		if (any)
			r = ipt_setup_family(families[k], o, chain, comment, addrs, n, err);
	}
	return r;
}

/* Whether a jump's "-s" source is one of @addrs (NULL: any), upstream's both forms. */
static bool jump_of(const char *line, size_t len, const struct ip_prefix *addrs, size_t n)
{
	char text[IP_PREFIX_STRLEN];
	struct ip_prefix src;
	const char *s;
	size_t k;

	if (!addrs)
		return true;
	for (s = line; s + 4 <= line + len && memcmp(s, " -s ", 4) != 0; s++)
		;
	if (s + 4 > line + len)
		return false;
	s += 4;
	k = strcspn(s, " \n");
	if (k >= sizeof(text))
		return false;
	memcpy(text, s, k);
	text[k] = '\0';
	if (ip_prefix_parse(text, &src) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ip_prefix_contains(&src, &addrs[i].addr))
			return true;
	return false;
}

/*
 * Appends the removal of the jumps carrying @v's comment from @addrs (every one when
 * NULL), and of the chain when it is ours and no jump to it is left: two interfaces of
 * a container in one network share it (upstream names it after network and container).
 */
static void put_removal(struct text_buf *b, const struct ipt_view *v, const struct ip_prefix *addrs,
			size_t n)
{
	const char *p, *line;
	bool left = false;
	size_t len;

	for (p = v->listing; next_line(&p, &line, &len);) {
		if (!line_starts(line, len, "-A POSTROUTING ") || !line_jumps(line, len, v->chain) ||
		    !line_has(line, len, v->comment))
			continue;
		if (!jump_of(line, len, addrs, n)) {
			left = true;
			continue;
		}
		text_buf_puts(b, "-D");
		text_buf_add(b, line + 2, len - 2);
		text_buf_putc(b, '\n');
	}
	if (v->exists && !v->foreign && !left) {
		text_buf_puts(b, "-F ");
		text_buf_puts(b, v->chain);
		text_buf_puts(b, "\n-X ");
		text_buf_puts(b, v->chain);
		text_buf_putc(b, '\n');
	} else if (v->exists && v->foreign) {
		log_warning("iptables chain nat %s holds rules or jumps that are not ours: left in place",
			    v->chain);
	}
}

/* Runs what @b holds past "*nat\n" when it holds anything. */
static int ipt_commit(enum ipt_family f, struct text_buf *b, struct cni_err *err)
{
	if (b->len == strlen("*nat\n"))
		return 0;
	text_buf_puts(b, "COMMIT\n");
	text_buf_putc(b, '\0');
	if (b->oom)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return ipt_restore(f, b->data, err);
}

/* The nat table's listing; NULL (and 0) without a binary, whose errors upstream ignores. */
static int ipt_listing(enum ipt_family f, char **ret, struct cni_err *err)
{
	struct cni_err quiet = { 0 };
	int r = ipt_list(f, "nat", NULL, ret, &quiet);

	if (r == -ENOEXEC) {
		*ret = NULL;
		return 0;
	}
	if (r < 0)
		*err = quiet;
	return r;
}

static int ipt_teardown_family(enum ipt_family f, const char *chain, const char *comment,
			       const struct ip_prefix *addrs, size_t n, struct cni_err *err)
{
	_cleanup_free_ char *listing = NULL;
	struct text_buf b = { 0 };
	struct ipt_view v = { 0 };
	int r = ipt_listing(f, &listing, err);

	if (r < 0 || !listing)
		return r;
	r = ipt_view_parse(listing, chain, comment, &v);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	text_buf_puts(&b, "*nat\n");
	put_removal(&b, &v, addrs, n);
	r = ipt_commit(f, &b, err);
	text_buf_free(&b);
	ipt_view_free(&v);
	return r;
}

static int ipt_teardown(const struct masq_owner *o, const struct ip_prefix *addrs, size_t n,
			struct cni_err *err)
{
	char chain[CHAINNAME_IPT_LEN + 1], comment[1024];
	bool v4 = !addrs, v6 = !addrs;
	int r = ipt_names(o->network, o->container_id, chain, comment, sizeof(comment), err);

	for (size_t i = 0; addrs && i < n; i++) {
		v4 = v4 || addrs[i].addr.family == AF_INET;
		v6 = v6 || addrs[i].addr.family == AF_INET6;
	}
	if (r >= 0 && v4)
		r = ipt_teardown_family(IPT_IPV4, chain, comment, addrs, n, err);
	if (r >= 0 && v6)
		r = ipt_teardown_family(IPT_IPV6, chain, comment, addrs, n, err);
	return r;
}

/* --- the three operations ------------------------------------------------------------------- */

/* SupportsIPTables(): "iptables -t filter -S INPUT 1" answers, whatever it says. */
static bool iptables_works(void)
{
	struct cni_err quiet = { 0 };

	return ipt_chain_exists(IPT_IPV4, "filter", "INPUT", &quiet) >= 0;
}

/* Whether the kernel answers nftables' questions (upstream asks its nft binary instead). */
static bool nftables_works(void)
{
	struct cni_err quiet = { 0 };

	return nft_chain_exists(NFT_FAMILY_INET, MASQ_NFT_TABLE, NULL, &quiet) >= 0;
}

int masq_setup(enum masq_backend backend, const struct masq_owner *o,
	       const struct ip_prefix *addrs, size_t n, struct cni_err *err)
{
	if (backend == MASQ_DEFAULT)
		backend = !iptables_works() && nftables_works() ? MASQ_NFTABLES : MASQ_IPTABLES;
	log_info("masquerading %zu address(es) of %s with %s", n, o->container_id,
		 backend == MASQ_NFTABLES ? "nftables" : "iptables");
	if (backend == MASQ_NFTABLES)
		return nft_setup(o, addrs, n, err);
	return ipt_setup(o, addrs, n, err);
}

int masq_check(enum masq_backend backend, struct cni_err *err)
{
	bool ipt = backend != MASQ_NFTABLES && iptables_works();
	bool nft = backend != MASQ_IPTABLES && nftables_works();

	if (ipt || nft)
		return 0;
	return cni_err_set(err, CNI_ERR_STATUS_UNAVAILABLE, -ENOTSUP, "ipMasq: %s",
			   backend == MASQ_IPTABLES ? "iptables cannot be run (no binary in PATH, or no nat table)" :
			   backend == MASQ_NFTABLES ? "the kernel has no nftables" :
			   "neither iptables nor the kernel's nftables can be used");
}

int masq_status(const struct cni_conf *conf, struct cni_err *err)
{
	struct cni_err ignored = { 0 };
	enum masq_backend backend = MASQ_DEFAULT;
	const char *name = NULL;
	bool masq = false;

	if (!cni_conf_has_ipam(conf) || cni_conf_get_bool(conf, "ipMasq", &masq, &ignored) <= 0 ||
	    !masq)
		return 0;
	if (cni_conf_get_str(conf, "ipMasqBackend", &name, &ignored) <= 0 ||
	    masq_backend_parse(name, &backend) < 0)
		backend = MASQ_DEFAULT;
	return masq_check(backend, err);
}

int masq_teardown(const struct masq_owner *o, const struct ip_prefix *addrs, size_t n,
		  struct cni_err *err)
{
	char inst[INSTANCE_LEN + 1];
	int r;

	r = ipt_teardown(o, addrs, n, err);
	if (r < 0)
		return r;
	if (hash_instance(o, inst) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return nft_remove(inst, NULL, NULL, err);
}

struct gc_keep {
	const char *network;
	const struct cni_attachment *valid;
	size_t n;
};

static bool nft_gc_keep(const char *comment, void *data)
{
	const struct gc_keep *k = data;

	for (size_t i = 0; i < k->n; i++) {
		const struct masq_owner o = { .network = k->network, .ifname = k->valid[i].ifname,
					      .container_id = k->valid[i].container_id };
		char c[NFT_COMMENT_CUT + 1];

		if (comment_instance(&o, c) >= 0 && strcmp(c, comment) == 0)
			return true;
	}
	return false;
}

/* The container whose jump a POSTROUTING line of this network is, NULL when none. */
static char *ipt_gc_owner(const char *line, size_t len, const char *prefix)
{
	const char *end = " -j CNI-";
	size_t plen = strlen(prefix);

	if (!line_starts(line, len, "-A POSTROUTING ") || !line_has(line, len, end))
		return NULL;
	for (size_t i = 0; i + plen <= len; i++) {
		const char *id = line + i + plen;
		size_t idlen;

		if (memcmp(line + i, prefix, plen) != 0)
			continue;
		idlen = strcspn(id, "\\\n");
		if (i + plen + idlen + 3 <= len && memcmp(id + idlen, "\\\"\"", 3) == 0)
			return strndup(id, idlen);
		return NULL;
	}
	return NULL;
}

static bool gc_valid_id(const struct gc_keep *k, const char *id)
{
	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->valid[i].container_id, id) == 0)
			return true;
	return false;
}

/* Whether the removal being built already has a container's jumps (it has two addresses). */
static bool done_chain(const struct text_buf *b, const char *chain)
{
	size_t n = strlen(chain);

	for (size_t i = 0; i + n <= b->len; i++)
		if (memcmp(b->data + i, chain, n) == 0)
			return true;
	return false;
}

/* The containers of @network with a jump in POSTROUTING and no valid attachment lose it. */
static int ipt_gc_family(enum ipt_family f, const struct gc_keep *k, struct cni_err *err)
{
	_cleanup_free_ char *listing = NULL, *prefix = NULL;
	struct text_buf b = { 0 };
	const char *p, *line;
	size_t len;
	int r = ipt_listing(f, &listing, err);

	if (r < 0 || !listing)
		return r;
	if (asprintf(&prefix, " --comment \"name: \\\"%s\\\" id: \\\"", k->network) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	text_buf_puts(&b, "*nat\n");
	for (p = listing; next_line(&p, &line, &len) && r >= 0;) {
		_cleanup_free_ char *id = ipt_gc_owner(line, len, prefix);
		char chain[CHAINNAME_IPT_LEN + 1], comment[1024];
		struct ipt_view v;

		if (!id || gc_valid_id(k, id) || ipt_names(k->network, id, chain, comment,
							    sizeof(comment), err) < 0 ||
		    !line_jumps(line, len, chain) || done_chain(&b, chain))
			continue;
		log_info("GC: removing the iptables masquerade of %s in network %s", id, k->network);
		r = ipt_view_parse(listing, chain, comment, &v);
		if (r >= 0)
			put_removal(&b, &v, NULL, 0);
		else
			cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
		ipt_view_free(&v);
	}
	if (r >= 0)
		r = ipt_commit(f, &b, err);
	text_buf_free(&b);
	return r;
}

int masq_gc(const char *network, const struct cni_attachment *valid, size_t n,
	    struct cni_err *err)
{
	const struct gc_keep k = { .network = network, .valid = valid, .n = n };
	char hash[17];
	int r;

	r = ipt_gc_family(IPT_IPV4, &k, err);
	if (r >= 0)
		r = ipt_gc_family(IPT_IPV6, &k, err);
	if (r < 0)
		return r;
	if (hash_network(network, hash) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return nft_remove(hash, nft_gc_keep, (void *)&k, err);
}
