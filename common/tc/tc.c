/* Traffic control: the ifb device, qdiscs and the filter that redirects a link's ingress */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/tc/tc.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"

#define MIRRED_MAX 8

/* The packet scheduler's ticks in a microsecond, as tc's tick_in_usec reckons them. */
static int ticks_per_usec(double *ret)
{
	_cleanup_free_ char *text = NULL;
	unsigned int t2us, us2t, clock_res;
	size_t len;
	int r;

	r = file_read("/proc/net/psched", 256, &text, &len);
	if (r < 0)
		return r;
	if (sscanf(text, "%x %x %x", &t2us, &us2t, &clock_res) != 3 || !t2us || !us2t || !clock_res)
		return -EBADMSG;
	/* The kernel's ratio, scaled by its clock against a microsecond's. */
	*ret = ((double)t2us / us2t) * ((double)clock_res / 1000000.0);
	return 0;
}

int tc_ticks(uint32_t usec, uint32_t *ret)
{
	double scale, ticks;
	int r;

	if ((r = ticks_per_usec(&scale)) < 0)
		return r;
	ticks = (double)usec * scale;
	if (ticks > (double)UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)ticks;
	return 0;
}

int tc_bucket_bytes(uint32_t ticks, uint64_t rate, double *ret)
{
	double scale;
	int r;

	if ((r = ticks_per_usec(&scale)) < 0)
		return r;
	*ret = (double)ticks / scale * (double)rate / 1000000.0;
	return 0;
}

int tc_ifb_create(struct net_ns *ns, const char *name, unsigned int mtu)
{
	const struct net_child c = { .kind = NET_CHILD_IFB, .name = name, .netns_fd = -1,
				     .mtu = mtu, .up = true, .has_txqlen = true, .txqlen = 0 };

	return net_link_create(ns, &c);
}

/* Whether a link is an ifb: its IFLA_INFO_KIND. */
static int is_ifb(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *tb[IFLA_MAX + 1], *info[IFLA_INFO_MAX + 1];
	bool *ifb = data;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    nlmsg_parse((struct nlmsghdr *)nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX, NULL) < 0 ||
	    !tb[IFLA_LINKINFO] || nla_parse_nested(info, IFLA_INFO_MAX, tb[IFLA_LINKINFO], NULL) < 0)
		return 0;
	*ifb = info[IFLA_INFO_KIND] && nla_len(info[IFLA_INFO_KIND]) >= 3 &&
	       memcmp(nla_data(info[IFLA_INFO_KIND]), "ifb", 3) == 0 &&
	       (nla_len(info[IFLA_INFO_KIND]) == 3 || ((char *)nla_data(info[IFLA_INFO_KIND]))[3] == 0);
	return 0;
}

int tc_ifb_delete(struct net_ns *ns, const char *name)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct net_link link;
	bool ifb = false;
	int r;

	r = net_link_get_by_name(ns, name, &link);
	if (r == -ENODEV)
		return 0;
	if (r < 0)
		return r;
	/* A name is all DEL has: never delete a link that is not the ifb ADD made. */
	ifi.ifi_index = link.ifindex;
	r = nlsock_msg_new(RTM_GETLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	r = nlsock_talk(ns, NETLINK_ROUTE, msg, is_ifb, NULL, &ifb);
	if (r < 0)
		return r == -ENODEV ? 0 : r;
	if (!ifb)
		return -EPERM;
	r = net_link_delete(ns, link.ifindex);
	return r == -ENODEV ? 0 : r;
}

static int tc_msg(uint16_t type, uint16_t flags, int ifindex, uint32_t handle, uint32_t parent,
		  uint32_t info, struct nl_msg **ret)
{
	struct tcmsg t = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_handle = handle,
			   .tcm_parent = parent, .tcm_info = info };

	if (ifindex <= 0)
		return -EINVAL;
	return nlsock_msg_new(type, flags, &t, sizeof(t), ret);
}

int tc_qdisc_add_ingress(struct net_ns *ns, int ifindex)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct nlattr *opts;
	int r;

	net_ack_clear();
	r = tc_msg(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex, TC_HANDLE(0xffff, 0),
		   TC_HANDLE_INGRESS, 0, &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, TCA_KIND, "ingress") < 0 ||
	    !(opts = nla_nest_start(msg, TCA_OPTIONS)) || nla_nest_end_keep_empty(msg, opts) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

int tc_qdisc_add_tbf(struct net_ns *ns, int ifindex, const struct tc_tbf *t)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct tc_tbf_qopt q = { .limit = t->limit, .buffer = t->buffer };
	struct nlattr *opts;
	int r;

	if (!t->rate || !t->buffer)
		return -EINVAL;
	net_ack_clear();
	/* The 32-bit rate is cut, as vishvananda/netlink does; the full one follows past 32 bits. */
	q.rate.rate = (uint32_t)t->rate;
	r = tc_msg(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex, TC_HANDLE(1, 0), TC_HANDLE_ROOT,
		   0, &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, TCA_KIND, "tbf") < 0 || !(opts = nla_nest_start(msg, TCA_OPTIONS)) ||
	    nla_put(msg, TCA_TBF_PARMS, sizeof(q), &q) < 0 ||
	    (t->rate >= (1ull << 32) && nla_put_u64(msg, TCA_TBF_RATE64, t->rate) < 0) ||
	    nla_nest_end(msg, opts) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

int tc_qdisc_delete(struct net_ns *ns, int ifindex, uint32_t parent)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	r = tc_msg(RTM_DELQDISC, 0, ifindex, 0, parent, 0, &msg);
	if (r < 0)
		return r;
	r = nlsock_request(ns, msg);
	/* The kernel says EINVAL when no qdisc of that parent is there to delete. */
	return r == -EINVAL ? -ENOENT : r;
}

/* One mirred action as the tab'th of a filter's list. */
static int put_mirred(struct nl_msg *msg, int tab, const struct tc_redirect_action *a)
{
	struct tc_mirred m = { .action = a->action, .eaction = a->eaction,
			       .ifindex = (uint32_t)a->ifindex };
	struct nlattr *act, *opts;

	if (a->ifindex <= 0 || !(act = nla_nest_start(msg, tab)) ||
	    nla_put_string(msg, TCA_ACT_KIND, "mirred") < 0 ||
	    !(opts = nla_nest_start(msg, TCA_ACT_OPTIONS)) ||
	    nla_put(msg, TCA_MIRRED_PARMS, sizeof(m), &m) < 0 || nla_nest_end(msg, opts) < 0 ||
	    nla_nest_end(msg, act) < 0)
		return -1;
	return 0;
}

int tc_filter_add_redirect(struct net_ns *ns, int ifindex, uint32_t parent, uint16_t prio,
			   uint32_t classid, const struct tc_redirect_action *acts, size_t n)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	/* One key of mask 0: every packet matches; terminal: its actions run. */
	const struct tc_u32_sel sel = { .flags = TC_U32_TERMINAL, .nkeys = 1 };
	uint8_t s[sizeof(struct tc_u32_sel) + sizeof(struct tc_u32_key)] = { 0 };
	struct nlattr *opts, *list;
	int r;

	memcpy(s, &sel, sizeof(sel));
	if (n == 0 || n > MIRRED_MAX)
		return -EINVAL;
	net_ack_clear();
	r = tc_msg(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex, 0, parent,
		   TC_HANDLE(prio, htons(ETH_P_ALL)), &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, TCA_KIND, "u32") < 0 || !(opts = nla_nest_start(msg, TCA_OPTIONS)) ||
	    nla_put(msg, TCA_U32_SEL, sizeof(s), s) < 0 ||
	    (classid && nla_put_u32(msg, TCA_U32_CLASSID, classid) < 0) ||
	    !(list = nla_nest_start(msg, TCA_U32_ACT)))
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++)
		if (put_mirred(msg, (int)i + 1, &acts[i]) < 0)
			return acts[i].ifindex <= 0 ? -EINVAL : -EMSGSIZE;
	if (nla_nest_end(msg, list) < 0 || nla_nest_end(msg, opts) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}

struct qdiscs {
	int ifindex;
	struct tc_qdisc_info *v;
	size_t n, cap;
};

static int on_qdisc(const struct nlmsghdr *nlh, void *data)
{
	struct nlattr *tb[TCA_MAX + 1], *opts[TCA_TBF_MAX + 1];
	const struct tcmsg *t = nlmsg_data(nlh);
	struct qdiscs *q = data;
	struct tc_qdisc_info *i;
	int r;

	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    nlmsg_parse((struct nlmsghdr *)nlh, sizeof(*t), tb, TCA_MAX, NULL) < 0)
		return 0;
	/* Old kernels dump every link's qdiscs. */
	if (t->tcm_ifindex != q->ifindex)
		return 0;
	r = nlsock_grow((void **)&q->v, &q->cap, q->n, sizeof(*q->v));
	if (r < 0)
		return r;
	i = &q->v[q->n++];
	*i = (struct tc_qdisc_info){ .handle = t->tcm_handle, .parent = t->tcm_parent };
	if (tb[TCA_KIND])
		snprintf(i->kind, sizeof(i->kind), "%.*s", nla_len(tb[TCA_KIND]),
			 (const char *)nla_data(tb[TCA_KIND]));
	if (strcmp(i->kind, "tbf") != 0 || !tb[TCA_OPTIONS] ||
	    nla_parse_nested(opts, TCA_TBF_MAX, tb[TCA_OPTIONS], NULL) < 0 || !opts[TCA_TBF_PARMS] ||
	    nla_len(opts[TCA_TBF_PARMS]) < (int)sizeof(struct tc_tbf_qopt))
		return 0;
	{
		struct tc_tbf_qopt qo;

		memcpy(&qo, nla_data(opts[TCA_TBF_PARMS]), sizeof(qo));
		i->has_tbf = true;
		i->tbf = (struct tc_tbf){ .rate = qo.rate.rate, .limit = qo.limit,
					  .buffer = qo.buffer };
		if (opts[TCA_TBF_RATE64] && nla_len(opts[TCA_TBF_RATE64]) == 8)
			i->tbf.rate = nla_get_u64(opts[TCA_TBF_RATE64]);
	}
	return 0;
}

static void qdiscs_reset(void *data)
{
	struct qdiscs *q = data;

	q->n = 0;
}

int tc_qdisc_list(struct net_ns *ns, int ifindex, struct tc_qdisc_info **ret, size_t *ret_n)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct qdiscs q = { .ifindex = ifindex };
	int r;

	net_ack_clear();
	r = tc_msg(RTM_GETQDISC, NLM_F_DUMP, ifindex, 0, 0, 0, &msg);
	if (r < 0)
		return r;
	r = nlsock_talk(ns, NETLINK_ROUTE, msg, on_qdisc, qdiscs_reset, &q);
	if (r < 0) {
		free(q.v);
		return r;
	}
	*ret = q.v;
	*ret_n = q.n;
	return 0;
}
