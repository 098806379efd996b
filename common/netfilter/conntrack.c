/* Conntrack: deleting the connection-tracking entries a new mapping would otherwise lose to */
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/netfilter/conntrack.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"

/* The entries a dump found: each one's attributes, resent as its delete. */
struct matches {
	uint8_t l4proto;
	const uint8_t *ports; /* a bit per port */
	struct nl_msg **v;
	size_t n, cap;
};

static void matches_reset(void *data)
{
	struct matches *m = data;

	for (size_t i = 0; i < m->n; i++)
		nlmsg_free(m->v[i]);
	m->n = 0;
}

/* Whether an entry's original tuple is of the protocol and destination port wanted. */
static bool tuple_matches(struct nlattr *orig, const struct matches *m)
{
	struct nlattr *t[CTA_TUPLE_MAX + 1], *p[CTA_PROTO_MAX + 1];
	uint16_t port;

	if (!orig || nla_parse_nested(t, CTA_TUPLE_MAX, orig, NULL) < 0 || !t[CTA_TUPLE_PROTO] ||
	    nla_parse_nested(p, CTA_PROTO_MAX, t[CTA_TUPLE_PROTO], NULL) < 0 || !p[CTA_PROTO_NUM] ||
	    !p[CTA_PROTO_DST_PORT] || nla_len(p[CTA_PROTO_DST_PORT]) != 2)
		return false;
	if (nla_get_u8(p[CTA_PROTO_NUM]) != m->l4proto)
		return false;
	port = ntohs(nla_get_u16(p[CTA_PROTO_DST_PORT]));
	return m->ports[port / 8] & (1u << (port % 8));
}

static int on_entry(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *tb[CTA_MAX + 1];
	struct matches *m = data;
	const struct nfgenmsg *g = nlmsg_data(nlh);
	struct nl_msg *del;
	int r;

	if (nlh->nlmsg_type != (NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW) ||
	    nlmsg_parse((struct nlmsghdr *)nlh, sizeof(*g), tb, CTA_MAX, NULL) < 0 ||
	    !tuple_matches(tb[CTA_TUPLE_ORIG], m))
		return 0;
	r = nlsock_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v));
	if (r < 0)
		return r;
	/* Its tuple, zone and ID: the kernel deletes this entry and no newer one. */
	r = nlsock_msg_new(NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_DELETE, 0, g, sizeof(*g), &del);
	if (r < 0)
		return r;
	m->v[m->n++] = del;
	if (nla_put(del, NLA_F_NESTED | CTA_TUPLE_ORIG, nla_len(tb[CTA_TUPLE_ORIG]),
		    nla_data(tb[CTA_TUPLE_ORIG])) < 0 ||
	    (tb[CTA_ZONE] &&
	     nla_put(del, CTA_ZONE, nla_len(tb[CTA_ZONE]), nla_data(tb[CTA_ZONE])) < 0) ||
	    (tb[CTA_ID] && nla_put(del, CTA_ID, nla_len(tb[CTA_ID]), nla_data(tb[CTA_ID])) < 0))
		return -ENOMEM;
	return 0;
}

int ct_delete_dports(int family, uint8_t l4proto, const uint16_t *ports, size_t n_ports,
		     size_t *ret_deleted, struct cni_err *err)
{
	struct nfgenmsg g = { .nfgen_family = (uint8_t)family, .version = NFNETLINK_V0 };
	_cleanup_(nlmsg_freep) struct nl_msg *dump = NULL;
	_cleanup_free_ uint8_t *set = NULL;
	struct matches m = { .l4proto = l4proto };
	size_t deleted = 0;
	int r;

	if ((family != AF_INET && family != AF_INET6) ||
	    (l4proto != IPPROTO_UDP && l4proto != IPPROTO_TCP && l4proto != IPPROTO_SCTP))
		return -EINVAL;
	if (n_ports == 0)
		goto done;
	set = calloc(65536 / 8, 1);
	if (!set)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n_ports; i++)
		set[ports[i] / 8] |= (uint8_t)(1u << (ports[i] % 8));
	m.ports = set;
	r = nlsock_msg_new(NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET, NLM_F_DUMP, &g, sizeof(g),
			   &dump);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	/* One dump for every port: each costs the kernel a walk of the whole table. */
	r = nlsock_talk(NULL, NETLINK_NETFILTER, dump, on_entry, matches_reset, &m);
	for (size_t i = 0; r >= 0 && i < m.n; i++) {
		int d = nlsock_talk(NULL, NETLINK_NETFILTER, m.v[i], NULL, NULL, NULL);

		/* Gone meanwhile (it timed out, or another DEL took it): nothing to do. */
		if (d == -ENOENT)
			continue;
		if (d < 0)
			r = d;
		else
			deleted++;
	}
	matches_reset(&m);
	free(m.v);
	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r,
				   "conntrack: cannot delete the %s entries of port %u%s: %s",
				   l4proto == IPPROTO_UDP ? "UDP" : l4proto == IPPROTO_TCP ? "TCP" : "SCTP",
				   ports[0], n_ports > 1 ? " and others" : "", strerror(-r));
done:
	if (ret_deleted)
		*ret_deleted = deleted;
	return 0;
}
