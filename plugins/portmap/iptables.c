/* portmap's iptables backend: upstream's CNI-HOSTPORT-* chains and a CNI-DN- chain per container */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/conf.h"
#include "common/netfilter/ipt-batch.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "common/util/sha512.h"
#include "plugins/portmap/config.h"
#include "plugins/portmap/iptables.h"

/* Upstream's names: never to change, or a node upgraded with pods live loses them. */
#define DNAT_CHAIN "CNI-HOSTPORT-DNAT"
#define SETMARK_CHAIN "CNI-HOSTPORT-SETMARK"
#define MASQ_CHAIN "CNI-HOSTPORT-MASQ"
#define OLD_SNAT_CHAIN "CNI-HOSTPORT-SNAT"
/* The longest comment iptables keeps, and multiport's ports per rule. */
#define COMMENT_MAX 255
#define MULTIPORT_MAX 15

DEFINE_CLEANUP_FUNC(ipt_batch_freep, struct ipt_batch *, ipt_batch_free);

/* A rule under construction: its arguments, the strings it owns kept until it is freed. */
struct args {
	const char *v[64];
	size_t n;
	char own[4][320];
	size_t n_own;
};

static void put(struct args *a, const char *s)
{
	a->v[a->n++] = s;
}

static const char *own(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static const char *own(struct args *a, const char *fmt, ...)
{
	char *s = a->own[a->n_own++];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(a->own[0]), fmt, ap);
	va_end(ap);
	return s;
}

static int chain_name(const char *prefix, const char *name, const char *cid, char *buf,
		      size_t size, struct cni_err *err)
{
	char text[1024];

	if ((size_t)snprintf(text, sizeof(text), "%s%s", name, cid) >= sizeof(text) ||
	    sha512_name(28, prefix, text, buf, size) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "network name and container ID too long for a chain name");
	return 0;
}

static int oom(struct cni_err *err)
{
	return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
}

/* The shared chains: the masquerade mark and its MASQUERADE, the DNAT chain and its jumps. */
static int shared_chains(struct ipt_batch *b, const struct portmap_conf *c, struct cni_err *err)
{
	char mark[32], printed[192];
	int r;

	snprintf(mark, sizeof(mark), "%#x/%#x", 1u << c->mark_bit, 1u << c->mark_bit);
	if (c->snat && !c->set_mark_chain) {
		const char *setmark[] = { "-m", "comment", "--comment", "CNI portfwd masquerade mark",
					  "-j", "MARK", "--set-xmark", mark };
		const char *masq[] = { "-m", "mark", "--mark", mark, "-j", "MASQUERADE" };
		const char *entry[] = { "-m", "comment", "--comment", "CNI portfwd requiring masquerade",
					"-j", MASQ_CHAIN };

		if (ipt_batch_ensure_chain(b, SETMARK_CHAIN) < 0)
			return oom(err);
		snprintf(printed, sizeof(printed),
			 "-m comment --comment \"CNI portfwd masquerade mark\" -j MARK --set-xmark %s", mark);
		if ((r = ipt_batch_ensure_rule(b, SETMARK_CHAIN, false, setmark, ARRAY_SIZE(setmark),
					       printed, err)) < 0)
			return r;
		if (ipt_batch_ensure_chain(b, MASQ_CHAIN) < 0)
			return oom(err);
		snprintf(printed, sizeof(printed), "-m mark --mark %s -j MASQUERADE", mark);
		if ((r = ipt_batch_ensure_rule(b, MASQ_CHAIN, false, masq, ARRAY_SIZE(masq), printed,
					       err)) < 0)
			return r;
		/* First in POSTROUTING: after ptp's and bridge's masquerading it would not be reached. */
		if ((r = ipt_batch_ensure_rule(b, "POSTROUTING", true, entry, ARRAY_SIZE(entry),
					       "-m comment --comment \"CNI portfwd requiring "
					       "masquerade\" -j " MASQ_CHAIN, err)) < 0)
			return r;
	}
	if (ipt_batch_ensure_chain(b, DNAT_CHAIN) < 0)
		return oom(err);
	for (int i = 0; i < 2; i++) {
		const char *entry[] = { "-m", "addrtype", "--dst-type", "LOCAL", "-j", DNAT_CHAIN };

		r = ipt_batch_ensure_rule(b, i ? "OUTPUT" : "PREROUTING", false, entry,
					  ARRAY_SIZE(entry),
					  "-m addrtype --dst-type LOCAL -j " DNAT_CHAIN, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Where the rules of a container go: into a batch (added, or only asked for when its chain
 * was there before), or, for CHECK, asked for (upstream runs "-C" for each). A rule comes
 * with the form "-S" prints it in, which answers without a process when it is found.
 */
struct sink {
	struct ipt_batch *b;
	bool fresh;
	bool check;
};

static int emit(const struct sink *s, const char *chain, const char *const *a, size_t n,
		const char *printed, struct cni_err *err)
{
	char text[512];
	size_t len = 0;
	int r;

	if (!s->check && !s->fresh)
		return ipt_batch_ensure_rule(s->b, chain, false, a, n, printed, err);
	if (!s->check) {
		r = ipt_batch_add_rule(s->b, chain, false, a, n);
		if (r == -EINVAL)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
					   "an iptables argument holds a control character");
		return r < 0 ? oom(err) : 0;
	}
	r = ipt_batch_rule_exists(s->b, chain, a, n, printed, err);
	if (r != 0)
		return r < 0 ? r : 0;
	for (size_t i = 0; i < n && len < sizeof(text); i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", i ? " " : "", a[i]);
	return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
			   "rule %s in chain %s not found in table nat", text, chain);
}

/* fillDnatRules() of upstream: three rules per mapping (hairpin mark, localhost mark, DNAT). */
static int dnat_rules(const struct sink *k, const char *dn, const struct portmap_conf *c, bool v6,
		      struct cni_err *err)
{
	const struct ip_prefix *ip = v6 ? &c->ip6 : &c->ip4;
	struct ip_prefix net = ip_prefix_network(ip);
	const char *mark_chain = c->set_mark_chain ? c->set_mark_chain : SETMARK_CHAIN;
	char addr[IP_PREFIX_STRLEN], cidr[IP_PREFIX_STRLEN], host[IP_PREFIX_STRLEN];
	char net_text[IP_PREFIX_STRLEN], printed[512];
	int r;

	ip_addr_format(&ip->addr, addr, sizeof(addr));
	ip_prefix_format(ip, cidr, sizeof(cidr));
	ip_prefix_format(&net, net_text, sizeof(net_text));
	for (size_t i = 0; i < c->n_maps; i++) {
		const struct portmap_mapping *m = &c->maps[i];
		struct args base = { 0 };
		char dst[IP_PREFIX_STRLEN + 8] = "", match[128];

		if (!portmap_mapping_in(m, v6))
			continue;
		put(&base, "-p");
		put(&base, m->proto_name);
		put(&base, "--dport");
		put(&base, own(&base, "%u", m->host_port));
		if (m->has_host_ip) {
			put(&base, "-d");
			put(&base, ip_addr_format(&m->host_ip, host, sizeof(host)));
			snprintf(dst, sizeof(dst), "-d %s/%u ", host, v6 ? 128 : 32);
		}
		/* As "-S" prints them: addresses, then protocol and its match, then the target. */
		snprintf(match, sizeof(match), "%s-p %s -m %s --dport %u", dst, m->proto_name,
			 m->proto_name, m->host_port);
		if (c->snat) {
			struct args hp = base;

			put(&hp, "-s");
			put(&hp, c->masq_all ? (v6 ? "::/0" : "0.0.0.0/0") : cidr);
			put(&hp, "-j");
			put(&hp, mark_chain);
			/* A source of any address is no match: "-S" leaves it out. */
			snprintf(printed, sizeof(printed), "%s%s%s%s -j %s", c->masq_all ? "" : "-s ",
				 c->masq_all ? "" : net_text, c->masq_all ? "" : " ", match, mark_chain);
			if ((r = emit(k, dn, hp.v, hp.n, printed, err)) < 0)
				return r;
			if (!v6 && !c->masq_all) {
				struct args lo = base;

				put(&lo, "-s");
				put(&lo, "127.0.0.1");
				put(&lo, "-j");
				put(&lo, mark_chain);
				snprintf(printed, sizeof(printed), "-s 127.0.0.1/32 %s -j %s", match,
					 mark_chain);
				if ((r = emit(k, dn, lo.v, lo.n, printed, err)) < 0)
					return r;
			}
		}
		put(&base, "-j");
		put(&base, "DNAT");
		put(&base, "--to-destination");
		put(&base, own(&base, v6 ? "[%s]:%u" : "%s:%u", addr, m->container_port));
		snprintf(printed, sizeof(printed), "%s -j DNAT --to-destination %s", match,
			 base.v[base.n - 1]);
		if ((r = emit(k, dn, base.v, base.n, printed, err)) < 0)
			return r;
	}
	return 0;
}

/* The entry rules: per protocol (sorted), 15 host ports a rule, the conditions, "-j DN". */
static int entry_rules(const struct sink *k, const char *dn, const struct portmap_conf *c,
		       const char *comment, bool v6, struct cni_err *err)
{
	static const char *const protos[] = { "sctp", "tcp", "udp" };
	const struct portmap_conditions *cond = v6 ? &c->cond6 : &c->cond4;
	char quoted[2 * COMMENT_MAX + 1], printed[3 * COMMENT_MAX];
	size_t q = 0;

	/* The comment as "-S" quotes it: its quotes and backslashes escaped. */
	for (const char *p = comment; *p && q + 2 < sizeof(quoted); p++) {
		if (*p == '"' || *p == '\\')
			quoted[q++] = '\\';
		quoted[q++] = *p;
	}
	quoted[q] = '\0';

	for (size_t p = 0; p < ARRAY_SIZE(protos); p++) {
		for (size_t i = 0; i < c->n_maps;) {
			char ports[MULTIPORT_MAX * 6 + 1] = "";
			size_t len = 0, got = 0, a_n;
			const char **a;
			int r;

			for (; i < c->n_maps && got < MULTIPORT_MAX; i++) {
				if (strcmp(c->maps[i].proto_name, protos[p]) != 0)
					continue;
				len += (size_t)snprintf(ports + len, sizeof(ports) - len, "%s%u",
							got ? "," : "", c->maps[i].host_port);
				got++;
			}
			if (got == 0)
				break;
			a = calloc(cond->n + 12, sizeof(*a));
			if (!a)
				return oom(err);
			a_n = 0;
			a[a_n++] = "-m";
			a[a_n++] = "comment";
			a[a_n++] = "--comment";
			a[a_n++] = comment;
			a[a_n++] = "-m";
			a[a_n++] = "multiport";
			a[a_n++] = "-p";
			a[a_n++] = protos[p];
			a[a_n++] = "--destination-ports";
			a[a_n++] = ports;
			for (size_t j = 0; cond->v && j < cond->n; j++)
				a[a_n++] = cond->v[j];
			a[a_n++] = "-j";
			a[a_n++] = dn;
			/* With conditions, how "-S" prints the rule is iptables' to say: asked. */
			snprintf(printed, sizeof(printed),
				 "-p %s -m comment --comment \"%s\" -m multiport --dports %s -j %s",
				 protos[p], quoted, ports, dn);
			r = emit(k, DNAT_CHAIN, a, a_n, cond->v && cond->n ? NULL : printed, err);
			free(a);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* upstream's trimComment(): an iptables comment holds 255 bytes. */
static void dnat_comment(const char *name, const char *cid, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "dnat name: \"%s\" id: \"%s\"", name, cid);

	if (n > COMMENT_MAX)
		memcpy(buf + COMMENT_MAX - 2, "...", 4);
}

struct forward {
	const struct portmap_conf *c;
	const char *dn, *comment;
	bool v6;
};

static int build_forward(struct ipt_batch *b, void *data, struct cni_err *err)
{
	const struct forward *fw = data;
	struct sink k = { .b = b, .fresh = !ipt_batch_has_chain(b, fw->dn) };
	int r = shared_chains(b, fw->c, err);

	if (r >= 0)
		r = ipt_batch_ensure_chain(b, fw->dn) < 0 ? oom(err) : 0;
	if (r >= 0)
		r = dnat_rules(&k, fw->dn, fw->c, fw->v6, err);
	return r < 0 ? r : entry_rules(&k, fw->dn, fw->c, fw->comment, fw->v6, err);
}

/* forwardPorts() of upstream's portmap_iptables.go for one family, read and written once. */
static int forward(enum ipt_family f, const struct portmap_conf *c, const char *name,
		   const char *cid, struct cni_err *err)
{
	char dn[64], comment[COMMENT_MAX + 4 + 512];
	struct forward fw = { .c = c, .dn = dn, .comment = comment, .v6 = f == IPT_IPV6 };
	int r;

	if ((r = chain_name("CNI-DN-", name, cid, dn, sizeof(dn), err)) < 0)
		return r;
	dnat_comment(name, cid, comment, sizeof(comment));
	r = ipt_batch_apply(f, "nat", build_forward, &fw, err);
	return r < 0 ? cni_err_prefix(err, r, "unable to setup DNAT") : 0;
}

struct jumps {
	struct ipt_batch *b;
	const char *target;
	int r;
};

/* Every rule ending in "-j TARGET" (upstream finds references "the hard way" so). */
static int delete_jump(const char *line, void *data)
{
	struct jumps *j = data;
	size_t n = strlen(line), t = strlen(j->target);

	if (n > t + 4 && memcmp(line + n - t - 4, " -j ", 4) == 0 &&
	    memcmp(line + n - t, j->target, t) == 0)
		j->r = ipt_batch_delete_printed(j->b, line);
	return j->r < 0 ? j->r : 0;
}

/* teardown() of upstream's chain.go, in @b: the jumps from @entry, then the chain. */
static int teardown(struct ipt_batch *b, const char *chain, const char *entry)
{
	struct jumps j = { .b = b, .target = chain };
	int r;

	if (!ipt_batch_has_chain(b, chain))
		return 0;
	r = ipt_batch_rules(b, entry, delete_jump, &j);
	return r < 0 ? r : ipt_batch_delete_chain(b, chain) < 0 ? -ENOMEM : 0;
}

/* The container's DN chain, and the SN chain older upstreams made, torn down in @b. */
static int teardown_container(struct ipt_batch *b, const char *name, const char *cid,
			      struct cni_err *err)
{
	char dn[64], sn[64];
	int r;

	if ((r = chain_name("CNI-DN-", name, cid, dn, sizeof(dn), err)) < 0 ||
	    (r = chain_name("CNI-SN-", name, cid, sn, sizeof(sn), err)) < 0)
		return r;
	if (teardown(b, dn, DNAT_CHAIN) < 0 || teardown(b, sn, OLD_SNAT_CHAIN) < 0)
		return oom(err);
	return 0;
}

/*
 * Runs @fn on each family's nat table and commits what it asks. A family whose iptables
 * cannot be run is passed over (a node without IPv6), as upstream's maybeGetIptables(),
 * unless both are.
 */
static int each_family(int (*fn)(struct ipt_batch *b, const void *data, struct cni_err *err),
		       const void *data, const char *what, struct cni_err *err)
{
	struct cni_err skipped[2] = { 0 };
	int usable = 0;

	for (int v6 = 0; v6 < 2; v6++) {
		_cleanup_(ipt_batch_freep) struct ipt_batch *b = NULL;
		int r = ipt_batch_open(v6 ? IPT_IPV6 : IPT_IPV4, "nat", &b, &skipped[v6]);

		if (r < 0)
			continue;
		usable++;
		r = fn(b, data, err);
		if (r >= 0)
			r = ipt_batch_commit(b, err);
		if (r < 0)
			return cni_err_prefix(err, r, "could not %s %s dnat", what,
					      v6 ? "ipv6" : "ipv4");
	}
	if (usable)
		return 0;
	return cni_err_set(err, CNI_ERR_KERNEL, skipped[0].errnum,
			   "neither iptables nor ip6tables is usable, (iptables) %s, (ip6tables) %s",
			   skipped[0].msg, skipped[1].msg);
}

struct who {
	const char *name, *cid;
	const struct cni_attachment *valid;
	size_t n_valid;
};

static int del_one(struct ipt_batch *b, const void *data, struct cni_err *err)
{
	const struct who *w = data;

	return teardown_container(b, w->name, w->cid, err);
}

int portmap_ipt_add(const struct portmap_conf *c, const char *name, const char *cid,
		    struct cni_err *err)
{
	int r;

	if (c->has_ip4 && (r = forward(IPT_IPV4, c, name, cid, err)) < 0)
		return r;
	if (c->has_ip6 && (r = forward(IPT_IPV6, c, name, cid, err)) < 0) {
		struct cni_err e = { 0 };

		if (c->has_ip4 && portmap_ipt_del(name, cid, &e) < 0)
			log_warning("undo: %s", e.msg);
		return r;
	}
	return 0;
}

int portmap_ipt_del(const char *name, const char *cid, struct cni_err *err)
{
	return each_family(del_one, &(struct who){ .name = name, .cid = cid }, "teardown", err);
}

/*
 * The entry rule's comment, 'dnat name: "NAME" id: "ID"', as "-S" prints it (its quotes
 * escaped). A comment upstream cut at 255 bytes holds no whole ID: passed over.
 */
static bool comment_parts(const char *line, char *name, char *cid, size_t size)
{
	const char *p = strstr(line, "dnat name: \\\""), *q;

	if (!p)
		return false;
	p += strlen("dnat name: \\\"");
	q = strstr(p, "\\\" id: \\\"");
	if (!q || (size_t)(q - p) >= size)
		return false;
	memcpy(name, p, (size_t)(q - p));
	name[q - p] = '\0';
	p = q + strlen("\\\" id: \\\"");
	q = strstr(p, "\\\"");
	if (!q || (size_t)(q - p) >= size)
		return false;
	memcpy(cid, p, (size_t)(q - p));
	cid[q - p] = '\0';
	return true;
}

struct sweep {
	struct ipt_batch *b;
	const struct who *w;
	struct cni_err *err;
	char **done;        /* containers torn down (an entry rule a protocol each) */
	size_t n_done;
	int r;
};

static int sweep_entry(const char *line, void *data)
{
	struct sweep *s = data;
	char name[256], cid[256], **done;

	if (!comment_parts(line, name, cid, sizeof(name)) || strcmp(name, s->w->name) != 0)
		return 0;
	for (size_t i = 0; i < s->w->n_valid; i++)
		if (strcmp(s->w->valid[i].container_id, cid) == 0)
			return 0;
	for (size_t i = 0; i < s->n_done; i++)
		if (strcmp(s->done[i], cid) == 0)
			return 0;
	done = reallocarray(s->done, s->n_done + 1, sizeof(*done));
	if (!done)
		return -ENOMEM;
	s->done = done;
	if (!(done[s->n_done] = strdup(cid)))
		return -ENOMEM;
	s->n_done++;
	log_debug("GC: container %s of network %s is gone: its port mappings go", cid, name);
	s->r = teardown_container(s->b, name, cid, s->err);
	return s->r < 0 ? s->r : 0;
}

static int gc_one(struct ipt_batch *b, const void *data, struct cni_err *err)
{
	struct sweep s = { .b = b, .w = data, .err = err };
	int r = ipt_batch_rules(b, DNAT_CHAIN, sweep_entry, &s);

	for (size_t i = 0; i < s.n_done; i++)
		free(s.done[i]);
	free(s.done);
	return r < 0 ? (s.r < 0 ? s.r : oom(err)) : 0;
}

int portmap_ipt_gc(const char *name, const struct cni_attachment *valid, size_t n,
		   struct cni_err *err)
{
	return each_family(gc_one, &(struct who){ .name = name, .valid = valid, .n_valid = n },
			   "sweep", err);
}

/* checkPorts() of upstream: the family of each address, its chain, rules and entry rules. */
int portmap_ipt_check(const struct portmap_conf *c, const char *name, const char *cid,
		      struct cni_err *err)
{
	char dn[64], comment[COMMENT_MAX + 4 + 512];
	int r;

	if ((r = chain_name("CNI-DN-", name, cid, dn, sizeof(dn), err)) < 0)
		return r;
	dnat_comment(name, cid, comment, sizeof(comment));
	for (int v6 = 0; v6 < 2; v6++) {
		_cleanup_(ipt_batch_freep) struct ipt_batch *b = NULL;
		struct sink k = { .check = true };

		if (!(v6 ? c->has_ip6 : c->has_ip4))
			continue;
		r = ipt_batch_open(v6 ? IPT_IPV6 : IPT_IPV4, "nat", &b, err);
		if (r >= 0 && !ipt_batch_has_chain(b, dn))
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
					"chain %s not found in iptables table nat", dn);
		k.b = b;
		if (r < 0 || (r = dnat_rules(&k, dn, c, v6, err)) < 0 ||
		    (r = entry_rules(&k, dn, c, comment, v6, err)) < 0)
			return cni_err_prefix(err, r, "could not check %s dnat", v6 ? "ipv6" : "ipv4");
	}
	return 0;
}

int portmap_ipt_usable(struct cni_err *err)
{
	_cleanup_free_ char *out = NULL;

	return ipt_list(IPT_IPV4, "nat", "OUTPUT", &out, err) < 0 ? 0 : 1;
}
