/* firewall's iptables backend: CNI-FORWARD and its admin chain, and the ingress policy's chains */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/netfilter/ipt-batch.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/log.h"
#include "plugins/firewall/config.h"
#include "plugins/firewall/iptables.h"

/* Upstream's names and comments: a node moved between it and ours finds its rules. */
#define FORWARD_CHAIN "CNI-FORWARD"
#define STAGE1 "CNI-ISOLATION-STAGE-1"
#define STAGE2 "CNI-ISOLATION-STAGE-2"
#define C_RULES "CNI firewall plugin rules"
#define C_ADMIN "CNI firewall plugin admin overrides"
#define C_POLICY "CNI firewall plugin rules (ingressPolicy: same-bridge|isolated)"

DEFINE_CLEANUP_FUNC(ipt_batch_freep, struct ipt_batch *, ipt_batch_free);

/* What a family's rules are made of, asked of a batch one way or the other. */
enum op { OP_ADD, OP_DEL, OP_CHECK };

static int oom(struct cni_err *err)
{
	return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
}

/* A rule added unless there, deleted when there, or asked for (code 103 when missing). */
static int rule(struct ipt_batch *b, enum op op, const char *chain, bool first,
		const char *const *a, size_t n, const char *printed, struct cni_err *err)
{
	int r;

	if (op == OP_ADD)
		return ipt_batch_ensure_rule(b, chain, first, a, n, printed, err);
	if (op == OP_DEL)
		return ipt_batch_delete_rule(b, chain, a, n, printed, err);
	r = ipt_batch_rule_exists(b, chain, a, n, printed, err);
	if (r != 0)
		return r < 0 ? r : 0;
	return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT, "expected %s rule %s not found",
			   chain, printed);
}

/* The two rules of an address in CNI-FORWARD (upstream's getPrivChainRules()). */
static int address_rules(struct ipt_batch *b, enum op op, const struct ip_prefix *ip,
			 struct cni_err *err)
{
	char text[IP_PREFIX_STRLEN], printed[2][128];
	const char *in[] = { "-d", text, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED",
			     "-j", "ACCEPT" };
	const char *out[] = { "-s", text, "-j", "ACCEPT" };
	int r;

	ip_prefix_format(ip, text, sizeof(text));
	snprintf(printed[0], sizeof(printed[0]),
		 "-d %s -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", text);
	snprintf(printed[1], sizeof(printed[1]), "-s %s -j ACCEPT", text);
	r = rule(b, op, FORWARD_CHAIN, false, in, ARRAY_SIZE(in), printed[0], err);
	return r < 0 ? r : rule(b, op, FORWARD_CHAIN, false, out, ARRAY_SIZE(out), printed[1], err);
}

/* setupChains() of upstream: the chains, FORWARD's jump to ours first, ours to the admin's. */
static int chains(struct ipt_batch *b, enum op op, const struct firewall_conf *c,
		  struct cni_err *err)
{
	const char *priv[] = { "-m", "comment", "--comment", C_RULES, "-j", FORWARD_CHAIN };
	const char *admin[] = { "-m", "comment", "--comment", C_ADMIN, "-j", c->admin_chain };
	char printed[160];
	int r;

	if (op == OP_CHECK) {
		if (!ipt_batch_has_chain(b, FORWARD_CHAIN) || !ipt_batch_has_chain(b, c->admin_chain))
			return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT, "chain %s or %s not found",
					   FORWARD_CHAIN, c->admin_chain);
	} else if (ipt_batch_ensure_chain(b, FORWARD_CHAIN) < 0 ||
		   ipt_batch_ensure_chain(b, c->admin_chain) < 0) {
		return oom(err);
	}
	r = rule(b, op, "FORWARD", true, priv, ARRAY_SIZE(priv),
		 "-m comment --comment \"" C_RULES "\" -j " FORWARD_CHAIN, err);
	snprintf(printed, sizeof(printed), "-m comment --comment \"" C_ADMIN "\" -j %s", c->admin_chain);
	return r < 0 ? r : rule(b, op, FORWARD_CHAIN, true, admin, ARRAY_SIZE(admin), printed, err);
}

/* setupIsolationChains() of upstream, for the bridge of prevResult. */
static int isolation(struct ipt_batch *b, const struct firewall_conf *c, struct cni_err *err)
{
	const char *br = c->bridge;
	const char *name = c->policy == FIREWALL_ISOLATED ? "isolated" : "same-bridge";
	char pc[96], p[5][256];
	const char *jump[] = { "-j", STAGE1, "-m", "comment", "--comment", C_POLICY };
	const char *s1[] = { "-i", br, "!", "-o", br, "-j", STAGE2, "-m", "comment", "--comment", pc };
	const char *drop[] = { "-i", br, "-o", br, "-j", "DROP", "-m", "comment", "--comment", pc };
	const char *ret[] = { "-j", "RETURN", "-m", "comment", "--comment", C_POLICY };
	const char *s2[] = { "-o", br, "-j", "DROP", "-m", "comment", "--comment", C_POLICY };
	int r;

	snprintf(pc, sizeof(pc), "CNI firewall plugin rules (ingressPolicy: %s)", name);
	snprintf(p[0], sizeof(p[0]), "-m comment --comment \"" C_POLICY "\" -j " STAGE1);
	snprintf(p[1], sizeof(p[1]), "-i %s ! -o %s -m comment --comment \"%s\" -j " STAGE2, br, br, pc);
	snprintf(p[2], sizeof(p[2]), "-i %s -o %s -m comment --comment \"%s\" -j DROP", br, br, pc);
	snprintf(p[3], sizeof(p[3]), "-m comment --comment \"" C_POLICY "\" -j RETURN");
	snprintf(p[4], sizeof(p[4]), "-o %s -m comment --comment \"" C_POLICY "\" -j DROP", br);
	if (ipt_batch_ensure_chain(b, STAGE1) < 0 || ipt_batch_ensure_chain(b, STAGE2) < 0)
		return oom(err);
	/* Before CNI-FORWARD's jump, and each bridge's rules before the RETURN: inserted first. */
	if ((r = ipt_batch_ensure_rule(b, "FORWARD", true, jump, ARRAY_SIZE(jump), p[0], err)) < 0 ||
	    (r = ipt_batch_ensure_rule(b, STAGE1, true, s1, ARRAY_SIZE(s1), p[1], err)) < 0 ||
	    (c->policy == FIREWALL_ISOLATED &&
	     (r = ipt_batch_ensure_rule(b, STAGE1, true, drop, ARRAY_SIZE(drop), p[2], err)) < 0) ||
	    (r = ipt_batch_ensure_rule(b, STAGE1, false, ret, ARRAY_SIZE(ret), p[3], err)) < 0 ||
	    (r = ipt_batch_ensure_rule(b, STAGE2, true, s2, ARRAY_SIZE(s2), p[4], err)) < 0)
		return r;
	return ipt_batch_ensure_rule(b, STAGE2, false, ret, ARRAY_SIZE(ret), p[3], err);
}

static bool has_family(const struct ip_prefix *ips, size_t n, int family)
{
	for (size_t i = 0; i < n; i++)
		if (ips[i].addr.family == family)
			return true;
	return false;
}

struct add {
	const struct firewall_conf *c;
	bool rules;
	int family;
};

static int build_add(struct ipt_batch *b, void *data, struct cni_err *err)
{
	const struct add *a = data;
	int r = 0;

	if (a->rules)
		r = chains(b, OP_ADD, a->c, err);
	for (size_t i = 0; r >= 0 && a->rules && i < a->c->n_ips; i++)
		if (a->c->ips[i].addr.family == a->family)
			r = address_rules(b, OP_ADD, &a->c->ips[i], err);
	if (r >= 0 && a->c->policy != FIREWALL_OPEN && a->c->bridge[0])
		r = isolation(b, a->c, err);
	return r;
}

static int add_family(enum ipt_family f, const struct firewall_conf *c, bool rules,
		      struct cni_err *err)
{
	struct add a = { .c = c, .rules = rules, .family = f == IPT_IPV6 ? AF_INET6 : AF_INET };

	return ipt_batch_apply(f, "filter", build_add, &a, err);
}

int firewall_ipt_add(const struct firewall_conf *c, bool rules, struct cni_err *err)
{
	int r;

	/* The policy's families are those of prevResult's addresses too (upstream's findProtos()). */
	if (has_family(c->ips, c->n_ips, AF_INET) && (r = add_family(IPT_IPV4, c, rules, err)) < 0)
		return r;
	if (has_family(c->ips, c->n_ips, AF_INET6) && (r = add_family(IPT_IPV6, c, rules, err)) < 0) {
		struct cni_err e = { 0 };

		if (rules && has_family(c->ips, c->n_ips, AF_INET) &&
		    firewall_ipt_del(c->ips, c->n_ips, &e) < 0)
			log_warning("undo: %s", e.msg);
		return r;
	}
	return 0;
}

int firewall_ipt_del(const struct ip_prefix *ips, size_t n, struct cni_err *err)
{
	for (int v6 = 0; v6 < 2; v6++) {
		_cleanup_(ipt_batch_freep) struct ipt_batch *b = NULL;
		int family = v6 ? AF_INET6 : AF_INET, r;

		if (!has_family(ips, n, family))
			continue;
		r = ipt_batch_open(v6 ? IPT_IPV6 : IPT_IPV4, "filter", &b, err);
		for (size_t i = 0; r >= 0 && i < n; i++)
			if (ips[i].addr.family == family)
				r = address_rules(b, OP_DEL, &ips[i], err);
		if (r >= 0)
			r = ipt_batch_commit(b, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int firewall_ipt_check(const struct firewall_conf *c, struct cni_err *err)
{
	for (int v6 = 0; v6 < 2; v6++) {
		_cleanup_(ipt_batch_freep) struct ipt_batch *b = NULL;
		int family = v6 ? AF_INET6 : AF_INET, r;

		if (!has_family(c->ips, c->n_ips, family))
			continue;
		r = ipt_batch_open(v6 ? IPT_IPV6 : IPT_IPV4, "filter", &b, err);
		if (r >= 0)
			r = chains(b, OP_CHECK, c, err);
		for (size_t i = 0; r >= 0 && i < c->n_ips; i++)
			if (c->ips[i].addr.family == family)
				r = address_rules(b, OP_CHECK, &c->ips[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}
