/*
 * common/net against the real kernel, in network namespaces of its own.
 *
 * The test unshares two fresh network namespaces (A, where it works, and B, a
 * move target kept alive only by a descriptor), so every link, address and
 * route it creates disappears with the process, whatever happens. Exits 77
 * when namespaces cannot be created (not root).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/attach/iface.h"
#include "common/cni/result.h"
#include "common/net/addr.h"
#include "common/net/ethtool.h"
#include "common/net/link-internal.h"
#include "common/net/link.h"
#include "common/net/neterr-internal.h"
#include "common/net/neterr.h"
#include "common/net/nlsock.h"
#include "common/net/ns.h"
#include "common/net/route.h"
#include "common/net/rule.h"
#include "common/net/sysctl.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/nsfd.h"

static int n_pass, n_fail;

__attribute__((format(printf, 2, 3)))
static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", n_pass + n_fail + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		n_pass++;
	else
		n_fail++;
	return ok;
}

#define CHECK(cond, ...) check((cond), __VA_ARGS__)
#define CHECK_R(expr, want, what)                                                              \
	__extension__({                                                                        \
		int _r = (expr);                                                               \
		check(_r == (want), "%s: %d (%s), want %d", (what), _r,                        \
		      _r < 0 ? strerror(-_r) : "ok", (want));                                  \
	})

static struct ip_prefix P(const char *s)
{
	struct ip_prefix p = { 0 };

	if (ip_prefix_parse(s, &p) < 0) {
		fprintf(stderr, "bad prefix in test: %s\n", s);
		abort();
	}
	return p;
}

static struct ip_addr A(const char *s)
{
	struct ip_addr a = { 0 };

	if (ip_addr_parse(s, &a) < 0) {
		fprintf(stderr, "bad address in test: %s\n", s);
		abort();
	}
	return a;
}

static int addr_add(int ifindex, const char *cidr)
{
	struct ip_prefix p = P(cidr);

	return net_addr_add(NULL, ifindex, &p);
}

static bool addr_is(const struct ip_addr *a, const char *text)
{
	struct ip_addr want = A(text);

	return ip_addr_equal(a, &want);
}

/* Test-only: a veth pair, which common/net has no call for. */
static int veth_create(const char *name, const char *peer)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct nlattr *info, *data, *pi;
	int r;

	r = nlsock_msg_new(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	if (nla_put_string(msg, IFLA_IFNAME, name) < 0)
		return -EMSGSIZE;
	info = nla_nest_start(msg, IFLA_LINKINFO);
	if (!info || nla_put_string(msg, IFLA_INFO_KIND, "veth") < 0)
		return -EMSGSIZE;
	data = nla_nest_start(msg, IFLA_INFO_DATA);
	pi = data ? nla_nest_start(msg, VETH_INFO_PEER) : NULL;
	if (!pi)
		return -EMSGSIZE;
	/* The peer's attributes follow its own ifinfomsg. */
	if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
	    nla_put_string(msg, IFLA_IFNAME, peer) < 0)
		return -EMSGSIZE;
	nla_nest_end(msg, pi);
	nla_nest_end(msg, data);
	nla_nest_end(msg, info);
	return nlsock_request(NULL, msg);
}

/* Test-only: delete an address, which common/net has no call for. */
static int addr_delete(int ifindex, const struct ip_prefix *p)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifaddrmsg ifa = {
		.ifa_family = (uint8_t)p->addr.family,
		.ifa_prefixlen = (uint8_t)p->len,
		.ifa_index = (uint32_t)ifindex,
	};
	int r;

	r = nlsock_msg_new(RTM_DELADDR, 0, &ifa, sizeof(ifa), &msg);
	if (r < 0)
		return r;
	if (nla_put(msg, IFA_LOCAL, (int)ip_addr_size(&p->addr), p->addr.bytes) < 0)
		return -EMSGSIZE;
	return nlsock_request(NULL, msg);
}

static int count_links(const struct nlmsghdr *nlh, void *data)
{
	size_t *n = data;

	if (nlh->nlmsg_type == RTM_NEWLINK)
		(*n)++;
	return 0;
}

/* nlsock_talk() hands over raw messages (RDMA netlink's, which libnl has no objects for). */
static void test_raw_dump(size_t want)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	size_t n = 0;

	nlsock_msg_new(RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof(ifi), &msg);
	CHECK(msg != NULL, "dump request built");
	if (msg)
		CHECK_R(nlsock_talk(NULL, NETLINK_ROUTE, msg, count_links, NULL, &n), 0, "raw link dump");
	CHECK(n == want, "%zu links dumped, want %zu", n, want);
}

static bool has_addr(int ifindex, int family, const char *cidr, bool *tentative)
{
	_cleanup_free_ struct net_addr *v = NULL;
	struct ip_prefix want = P(cidr);
	size_t n = 0;

	if (net_addr_list(NULL, ifindex, family, &v, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i].prefix.len == want.len && ip_addr_equal(&v[i].prefix.addr, &want.addr)) {
			if (tentative)
				*tentative = v[i].tentative;
			return true;
		}
	}
	return false;
}

/* The route to dst through ifindex, if listed. */
static bool find_route(int ifindex, const char *dst, struct net_route *ret)
{
	_cleanup_free_ struct net_route *v = NULL;
	struct ip_prefix want = P(dst);
	size_t n = 0;

	if (net_route_list(NULL, ifindex, AF_UNSPEC, &v, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i].dst.len == want.len && ip_addr_equal(&v[i].dst.addr, &want.addr)) {
			*ret = v[i];
			return true;
		}
	}
	return false;
}

static char *sysctl_get(const char *path, char *buf, size_t len)
{
	if (sysctl_read(path, buf, len) < 0)
		snprintf(buf, len, "<error>");
	return buf;
}

/* Hardware address text helpers */
static void test_hwaddr(void)
{
	uint8_t hw[HWADDR_MAX];
	char buf[3 * HWADDR_MAX];
	size_t len = 0;

	CHECK_R(hwaddr_parse("02:AA:bb:0c:dd:ee", hw, &len), 0, "parse 6 octets");
	CHECK(len == 6 && hw[1] == 0xaa && hw[3] == 0x0c, "parsed bytes");
	CHECK(strcmp(hwaddr_format(hw, len, buf, sizeof(buf)), "02:aa:bb:0c:dd:ee") == 0,
	      "format round trip: %s", buf);
	CHECK_R(hwaddr_parse("80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0d:7d:11", hw,
				 &len),
		0, "parse 20 octets (IPoIB)");
	CHECK(len == 20 && hw[19] == 0x11, "20 octets parsed");
	CHECK(strcmp(hwaddr_format(hw, len, buf, sizeof(buf)),
		     "80:00:00:48:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0d:7d:11") == 0,
	      "format 20 octets in 3*20 bytes: %s", buf);
	CHECK(strcmp(hwaddr_format(hw, 6, buf, 8), "80:00") == 0,
	      "format truncates at whole octets: %s", buf);
	CHECK_R(hwaddr_parse("02:aa:bb:cc:dd", hw, &len), -EINVAL, "5 octets rejected");
	CHECK_R(hwaddr_parse("02:aa:bb:cc:dd:ee:", hw, &len), -EINVAL, "trailing colon");
	CHECK_R(hwaddr_parse("02:aa:bb:cc:dd:eg", hw, &len), -EINVAL, "bad digit");
	CHECK_R(hwaddr_parse("2:aa:bb:cc:dd:ee", hw, &len), -EINVAL, "one-digit octet");
	CHECK_R(hwaddr_parse("02-aa-bb-cc-dd-ee", hw, &len), -EINVAL, "dashes");
}

/* Attribute list of a nest, in order. */
static size_t nest_types(const struct nlattr *nest, uint16_t *types, size_t max)
{
	const struct nlattr *a;
	size_t n = 0;
	int rem;

	nla_for_each_nested(a, nest, rem) {
		if (n < max)
			types[n] = (uint16_t)nla_type(a);
		n++;
	}
	return n;
}

/* The request builder, without sending anything: IPoIB cannot be created here. */
static void test_build(void)
{
	static const uint8_t hw[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct net_link_buf b;
	struct net_child c = {
		.kind = NET_CHILD_IPOIB,
		.name = "ib0.8001",
		.master_ifindex = 7,
		.netns_fd = -1,
		.ipoib = { .pkey = 0x8001, .mode = 1, .umcast = 1 },
	};
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)b.data;
	const struct nlattr *a, *info = NULL, *data = NULL;
	const struct ifinfomsg *ifi;
	bool ifname = false, link = false, other = false;
	uint16_t types[8];
	int len, rem, rem_nest;

	len = net_link_build_create(&c, b.data, sizeof(b.data));
	CHECK(len > 0 && (size_t)len == nlh->nlmsg_len, "IPoIB request built (%d bytes)", len);
	CHECK(nlh->nlmsg_type == RTM_NEWLINK &&
		      (nlh->nlmsg_flags & (NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK)) ==
			      (NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK),
	      "RTM_NEWLINK with CREATE|EXCL|ACK");
	ifi = nlmsg_data(nlh);
	CHECK(ifi->ifi_index == 0 && ifi->ifi_family == AF_UNSPEC, "empty ifinfomsg");
	nlmsg_for_each_attr(a, nlh, sizeof(*ifi), rem) {
		switch (nla_type(a)) {
		case IFLA_IFNAME:
			ifname = strcmp(nla_data(a), "ib0.8001") == 0;
			break;
		case IFLA_LINK:
			link = nla_get_u32(a) == 7;
			break;
		case IFLA_LINKINFO:
			info = a;
			break;
		default:
			other = true; /* no netns, MTU or address was asked for */
			break;
		}
	}
	CHECK(ifname && link && !other && info, "IFLA_IFNAME, IFLA_LINK, IFLA_LINKINFO only");
	if (info) {
		const struct nlattr *kind = NULL;

		nla_for_each_nested(a, info, rem_nest) {
			if (nla_type(a) == IFLA_INFO_KIND)
				kind = a;
			else if (nla_type(a) == IFLA_INFO_DATA)
				data = a;
		}
		CHECK(kind && strcmp(nla_data(kind), "ipoib") == 0, "kind ipoib");
	}
	if (CHECK(data != NULL, "IFLA_INFO_DATA present")) {
		size_t n = nest_types(data, types, ARRAY_SIZE(types));
		uint16_t v[3] = { 0 };
		size_t i = 0;

		CHECK(n == 3 && types[0] == IFLA_IPOIB_PKEY && types[1] == IFLA_IPOIB_MODE &&
			      types[2] == IFLA_IPOIB_UMCAST,
		      "PKEY, MODE, UMCAST in that order (%zu attributes)", n);
		nla_for_each_nested(a, data, rem_nest) {
			if (i < 3 && nla_len(a) == 2)
				v[i] = nla_get_u16(a);
			i++;
		}
		CHECK(v[0] == 0x8001 && v[1] == 1 && v[2] == 1, "u16 values 0x%x %u %u", v[0], v[1],
		      v[2]);
	}

	/* macvlan: the broadcast queue length only when set; netns, MTU, address when given. */
	c = (struct net_child){
		.kind = NET_CHILD_MACVLAN,
		.name = "mv9",
		.master_ifindex = 3,
		.netns_fd = 5,
		.mtu = 1400,
		.hwaddr = hw,
		.hwaddr_len = sizeof(hw),
		.macvlan = { .mode = MACVLAN_MODE_PRIVATE },
	};
	len = net_link_build_create(&c, b.data, sizeof(b.data));
	data = NULL;
	{
		bool ns = false, mtu = false, addr = false;

		nlmsg_for_each_attr(a, nlh, sizeof(*ifi), rem) {
			switch (nla_type(a)) {
			case IFLA_NET_NS_FD:
				ns = nla_get_u32(a) == 5;
				break;
			case IFLA_MTU:
				mtu = nla_get_u32(a) == 1400;
				break;
			case IFLA_ADDRESS:
				addr = nla_len(a) == 6 && memcmp(nla_data(a), hw, 6) == 0;
				break;
			case IFLA_LINKINFO:
				nla_for_each_nested(info, a, rem_nest) {
					if (nla_type(info) == IFLA_INFO_DATA)
						data = info;
				}
				break;
			default:
				break;
			}
		}
		CHECK(len > 0 && ns && mtu && addr, "macvlan request: netns fd, MTU, address");
	}
	if (CHECK(data != NULL, "macvlan IFLA_INFO_DATA present")) {
		size_t n = nest_types(data, types, ARRAY_SIZE(types));

		CHECK(n == 1 && types[0] == IFLA_MACVLAN_MODE, "mode only without bc_queue_len");
	}
	c.macvlan.bc_queue_len = 2000;
	len = net_link_build_create(&c, b.data, sizeof(b.data));
	CHECK(len > 0, "macvlan request with bc_queue_len");

	c.name = "a-name-too-long-for-linux";
	CHECK_R(net_link_build_create(&c, b.data, sizeof(b.data)), -EINVAL, "name too long");
	c.name = "mv9";
	CHECK_R(net_link_build_create(&c, b.data, 40), -EMSGSIZE, "buffer too small");
	c.master_ifindex = 0;
	CHECK_R(net_link_build_create(&c, b.data, sizeof(b.data)), -EINVAL, "no master");
}

static void test_sysctl(void)
{
	char buf[64];

	CHECK_R(sysctl_read("net/ipv4/conf/lo/arp_notify", buf, sizeof(buf)), 0, "sysctl read");
	CHECK(strcmp(buf, "0") == 0, "newline stripped: \"%s\"", buf);
	CHECK_R(sysctl_write("net/ipv4/conf/lo/arp_notify", "1"), 0, "sysctl write");
	CHECK(strcmp(sysctl_get("net/ipv4/conf/lo/arp_notify", buf, sizeof(buf)), "1") == 0,
	      "sysctl reads back 1: %s", buf);
	CHECK_R(sysctl_read("net/ipv4/conf/lo/arp_notify", buf, 1), -ENOBUFS, "value too long");
	CHECK_R(sysctl_read("net/ipv4/conf/lo/arp_notify", buf, 2), 0, "value fits in 2 bytes");
	CHECK_R(sysctl_read("net/ipv4/conf/nope0/arp_notify", buf, sizeof(buf)), -ENOENT,
		"missing key");
	CHECK_R(sysctl_write("net/../../etc/passwd", "x"), -EINVAL, "\"..\" rejected");
	CHECK_R(sysctl_write("net/ipv4/conf/lo/arp_notify", "abc"), -EINVAL,
		"kernel rejects a bad value");
}

struct in_b {
	int fd_b;
	const char *name;
	int ifindex;
	bool deleted;
};

static int in_b_check(void *userdata)
{
	struct in_b *s = userdata;
	struct net_link l;

	CHECK(nsfd_is_current(s->fd_b) == 1, "nsfd_run: in the target netns");
	if (CHECK_R(net_link_get_by_name(NULL, s->name, &l), 0, "link found in netns B"))
		s->ifindex = l.ifindex;
	s->deleted = net_link_delete(NULL, l.ifindex) == 0;
	CHECK(s->deleted, "link deleted in netns B");
	return 42;
}

static int in_b_fail(void *userdata)
{
	(void)userdata;
	return -EXDEV;
}

/* ethtool on a veth: no permanent MAC (zeros), no bus device. */
static void test_ethtool(const char *veth)
{
	uint8_t hw[HWADDR_MAX];
	size_t hw_len = 0;
	char bus[64] = "x";

	CHECK_R(net_ethtool_perm_hwaddr(NULL, veth, hw, &hw_len), -ENODATA, "veth: no permanent MAC");
	CHECK_R(net_ethtool_bus_info(NULL, veth, bus, sizeof(bus)), 0, "veth: ethtool drvinfo");
	CHECK(bus[0] == '\0', "veth: no bus device: \"%s\"", bus);
	CHECK_R(net_ethtool_bus_info(NULL, "nope0", bus, sizeof(bus)), -ENODEV, "ethtool: missing link");
	CHECK_R(net_ethtool_perm_hwaddr(NULL, "nope0", hw, &hw_len), -ENODEV, "ethtool: missing link");
}

/* A veth whose alias is its peer's name: a predicate that reads more than one field. */
static bool alias_names_peer(const struct net_link *link, void *data)
{
	const struct net_link *peer = data;

	return link->link_ifindex == peer->ifindex && strcmp(link->alias, peer->name) == 0;
}

static void test_links(int fd_a, int fd_b)
{
	static const uint8_t hw_mv[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01 };
	static const uint8_t hw_none[6] = { 0x02, 0xde, 0xad, 0, 0, 0 };
	struct net_link v0 = { 0 }, v1 = { 0 }, l = { 0 };
	struct net_child c;
	struct in_b s = { .fd_b = fd_b };
	char buf[64];
	int r;

	if (!CHECK_R(veth_create("tv0", "tv1"), 0, "veth pair created"))
		return;
	CHECK_R(net_link_get_by_name(NULL, "tv0", &v0), 0, "lookup tv0 by name");
	CHECK(v0.ifindex > 0 && strcmp(v0.name, "tv0") == 0 && strcmp(v0.kind, "veth") == 0,
	      "tv0: index %d, kind \"%s\"", v0.ifindex, v0.kind);
	CHECK(v0.hwaddr_len == 6 && v0.type == 1 /* ARPHRD_ETHER */, "tv0 is Ethernet");
	CHECK_R(net_link_get_by_name(NULL, "tv1", &v1), 0, "lookup tv1 by name");
	CHECK(v0.link_ifindex == v1.ifindex, "IFLA_LINK of tv0 is its peer");
	CHECK_R(net_link_get_by_index(NULL, v1.ifindex, &l), 0, "lookup tv1 by index");
	CHECK(strcmp(l.name, "tv1") == 0, "index lookup gives tv1: %s", l.name);
	CHECK_R(net_link_get_by_name(NULL, "nope0", &l), -ENODEV, "missing name");
	CHECK_R(net_link_get_by_index(NULL, 99999, &l), -ENODEV, "missing index");
	CHECK_R(net_link_get_by_name(NULL, "0123456789abcdef", &l), -EINVAL, "overlong name");
	test_raw_dump(3); /* lo, tv0, tv1 */

	CHECK_R(net_link_get_by_hwaddr(NULL, v0.hwaddr, v0.hwaddr_len, &l), 0, "lookup by hwaddr");
	CHECK(l.ifindex == v0.ifindex, "hwaddr lookup gives tv0: %s", l.name);
	test_ethtool("tv0");
	CHECK_R(net_link_get_by_hwaddr(NULL, hw_none, sizeof(hw_none), &l), -ENODEV, "unknown hwaddr");
	CHECK_R(net_link_set_alias(NULL, v1.ifindex, "orig-name.7"), 0, "set alias");
	CHECK_R(net_link_get_by_alias(NULL, "orig-name.7", &l), 0, "lookup by alias");
	CHECK(l.ifindex == v1.ifindex && strcmp(l.alias, "orig-name.7") == 0,
	      "alias lookup gives tv1 with its alias \"%s\"", l.alias);
	CHECK_R(net_link_get_by_alias(NULL, "orig-name", &l), -ENODEV, "unknown alias");
	CHECK_R(net_link_find(NULL, alias_names_peer, &v0, &l), -ENODEV, "find: no link yet");
	CHECK_R(net_link_set_alias(NULL, v1.ifindex, "tv0"), 0, "alias tv1 after its peer");
	CHECK_R(net_link_find(NULL, alias_names_peer, &v0, &l), 0, "find by predicate");
	CHECK(l.ifindex == v1.ifindex, "find gives tv1: %s", l.name);
	CHECK_R(net_link_set_alias(NULL, v1.ifindex, "orig-name.7"), 0, "alias back");
	CHECK_R(net_link_set_alias(NULL, v1.ifindex, ""), 0, "clear alias");
	CHECK_R(net_link_get_by_alias(NULL, "orig-name.7", &l), -ENODEV, "alias gone");
	CHECK(net_link_get_by_index(NULL, v1.ifindex, &l) == 0 && l.alias[0] == '\0', "alias empty");

	CHECK_R(net_link_set_mtu(NULL, v0.ifindex, 1450), 0, "set MTU");
	memset(&l, 0, sizeof(l));
	r = net_link_get_by_index(NULL, v0.ifindex, &l);
	CHECK(r == 0 && l.mtu == 1450, "MTU now %u", l.mtu);
	CHECK_R(net_link_set_mtu(NULL, v0.ifindex, 10), -EINVAL, "MTU below the minimum");
	CHECK_R(net_link_set_up(NULL, v0.ifindex, true), 0, "set up");
	CHECK(net_link_get_by_index(NULL, v0.ifindex, &l) == 0 && (l.flags & IFF_UP), "tv0 is up");
	CHECK_R(net_link_set_up(NULL, v0.ifindex, false), 0, "set down");
	CHECK(net_link_get_by_index(NULL, v0.ifindex, &l) == 0 && !(l.flags & IFF_UP), "tv0 is down");

	/* macvlan off the veth */
	c = (struct net_child){
		.kind = NET_CHILD_MACVLAN,
		.name = "mv0",
		.master_ifindex = v0.ifindex,
		.netns_fd = -1,
		.mtu = 1400,
		.hwaddr = hw_mv,
		.hwaddr_len = sizeof(hw_mv),
		.macvlan = { .mode = MACVLAN_MODE_BRIDGE, .bc_queue_len = 100 },
	};
	CHECK_R(net_link_create(NULL, &c), 0, "create macvlan");
	CHECK_R(net_link_get_by_name(NULL, "mv0", &l), 0, "macvlan found");
	CHECK(strcmp(l.kind, "macvlan") == 0, "kind \"%s\"", l.kind);
	CHECK(l.macvlan_mode == MACVLAN_MODE_BRIDGE, "mode %u is bridge", l.macvlan_mode);
	CHECK(l.mtu == 1400, "macvlan MTU %u", l.mtu);
	CHECK(l.hwaddr_len == 6 && memcmp(l.hwaddr, hw_mv, 6) == 0, "macvlan hwaddr %s",
	      hwaddr_format(l.hwaddr, l.hwaddr_len, buf, sizeof(buf)));
	CHECK(l.link_ifindex == v0.ifindex, "macvlan master is tv0");
	r = net_link_create(NULL, &c);
	CHECK(r == -EEXIST, "second create: %d (%s), ack \"%s\"", r, strerror(-r), net_ack_last());
	c.name = "mv1";
	c.master_ifindex = 99999;
	r = net_link_create(NULL, &c);
	CHECK(r == -ENODEV || r == -EINVAL, "missing master: %d (%s)", r, strerror(-r));
	c.master_ifindex = v0.ifindex;
	c.macvlan.mode = 0x40; /* no such mode */
	CHECK_R(net_link_create(NULL, &c), -EINVAL, "invalid mode");

	/* Rename: dots must work in sysctl paths too. */
	CHECK_R(net_link_set_name(NULL, l.ifindex, "mv.100"), 0, "rename to mv.100");
	CHECK_R(net_link_get_by_name(NULL, "mv0", &l), -ENODEV, "old name gone");
	CHECK_R(net_link_get_by_name(NULL, "mv.100", &l), 0, "new name found");
	CHECK_R(net_link_set_name(NULL, l.ifindex, "tv1"), -EEXIST, "rename onto a taken name");
	CHECK(strcmp(sysctl_get("net/ipv4/conf/mv.100/arp_notify", buf, sizeof(buf)), "0") == 0,
	      "sysctl of a dotted name reads: %s", buf);
	CHECK_R(sysctl_write("net/ipv4/conf/mv.100/arp_notify", "1"), 0, "dotted name written");
	CHECK(strcmp(sysctl_get("net/ipv4/conf/mv.100/arp_notify", buf, sizeof(buf)), "1") == 0,
	      "dotted name reads back: %s", buf);

	/* Move to B, then visit it. */
	CHECK_R(net_link_set_netns(NULL, l.ifindex, fd_b), 0, "move mv.100 to netns B");
	CHECK_R(net_link_get_by_name(NULL, "mv.100", &l), -ENODEV, "mv.100 left netns A");
	s.name = "mv.100";
	CHECK_R(nsfd_run(fd_b, in_b_check, &s), 42, "nsfd_run passes the return value");
	CHECK(nsfd_is_current(fd_a) == 1, "back in netns A after nsfd_run");
	CHECK(nsfd_is_current(fd_b) == 0, "no longer in netns B");
	CHECK_R(nsfd_run(fd_b, in_b_fail, NULL), -EXDEV, "nsfd_run passes an error through");
	CHECK(nsfd_is_current(fd_a) == 1, "back in netns A after a failing fn");
	CHECK_R(nsfd_run(-1, in_b_fail, NULL), -EINVAL, "nsfd_run refuses a bad fd");

	/* Created directly in B, as the macvlan plugin does. */
	c.name = "mvb";
	c.macvlan.mode = MACVLAN_MODE_PRIVATE;
	c.hwaddr = NULL;
	c.hwaddr_len = 0;
	c.mtu = 0;
	c.netns_fd = fd_b;
	CHECK_R(net_link_create(NULL, &c), 0, "create macvlan straight into netns B");
	CHECK_R(net_link_get_by_name(NULL, "mvb", &l), -ENODEV, "not in netns A");
	s = (struct in_b){ .fd_b = fd_b, .name = "mvb" };
	CHECK_R(nsfd_run(fd_b, in_b_check, &s), 42, "visit netns B again");
	CHECK(s.deleted, "mvb was there and is deleted");
}

static void test_addrs_routes(void)
{
	struct net_link v0, l;
	struct net_route rt;
	bool tentative = true;
	int ifindex = 0, r;

	if (!CHECK_R(net_link_get_by_name(NULL, "tv0", &v0), 0, "tv0 for addresses"))
		return;
	CHECK_R(net_default_route_ifindex(NULL, &ifindex), -ENOENT, "no default route yet");
	CHECK_R(net_link_set_up(NULL, v0.ifindex, true), 0, "tv0 up");
	if (CHECK_R(net_link_get_by_name(NULL, "tv1", &l), 0, "tv1, tv0's peer"))
		CHECK_R(net_link_set_up(NULL, l.ifindex, true), 0, "tv1 up (carrier for tv0)");

	CHECK_R(addr_add(v0.ifindex, "10.10.0.1/24"), 0,
		"add 10.10.0.1/24");
	CHECK(has_addr(v0.ifindex, AF_INET, "10.10.0.1/24", NULL), "10.10.0.1/24 listed");
	CHECK(!has_addr(v0.ifindex, AF_INET6, "10.10.0.1/24", NULL), "not in the IPv6 list");
	CHECK_R(addr_add(v0.ifindex, "10.10.0.1/24"), -EEXIST,
		"adding it again");
	CHECK_R(addr_add(v0.ifindex, "fd00:10::1/64"), 0,
		"add fd00:10::1/64");
	CHECK(has_addr(v0.ifindex, AF_UNSPEC, "fd00:10::1/64", &tentative), "fd00:10::1/64 listed");
	CHECK_R(addr_add(99999, "10.11.0.1/24"), -ENODEV,
		"address on a missing link");

	rt = (struct net_route){ .ifindex = v0.ifindex, .dst = P("10.20.0.0/16"), .has_gw = true,
				 .gw = A("10.10.0.254"), .priority = 50, .scope = -1 };
	CHECK_R(net_route_add(NULL, &rt), 0, "route 10.20.0.0/16 via 10.10.0.254 metric 50");
	memset(&rt, 0, sizeof(rt));
	CHECK(find_route(v0.ifindex, "10.20.0.0/16", &rt), "route listed");
	CHECK(rt.has_gw && addr_is(&rt.gw, "10.10.0.254") &&
		      rt.priority == 50 && rt.table == RT_TABLE_MAIN && rt.ifindex == v0.ifindex,
	      "gw, metric %u, table %u", rt.priority, rt.table);
	rt = (struct net_route){ .ifindex = v0.ifindex, .dst = P("10.21.0.0/16"), .mtu = 1280,
				 .advmss = 1200, .table = 100, .scope = RT_SCOPE_LINK };
	CHECK_R(net_route_add(NULL, &rt), 0, "route in table 100 with mtu/advmss, scope link");
	memset(&rt, 0, sizeof(rt));
	CHECK(find_route(v0.ifindex, "10.21.0.0/16", &rt), "table-100 route listed");
	CHECK(!rt.has_gw && rt.table == 100 && rt.mtu == 1280 && rt.advmss == 1200 &&
		      rt.scope == RT_SCOPE_LINK,
	      "table %u mtu %u advmss %u scope %d", rt.table, rt.mtu, rt.advmss, rt.scope);
	rt = (struct net_route){ .ifindex = v0.ifindex, .dst = P("fd00:20::/48"), .has_gw = true,
				 .gw = A("fd00:10::fe"), .scope = -1 };
	CHECK_R(net_route_add(NULL, &rt), 0, "IPv6 route via a gateway");
	CHECK(find_route(v0.ifindex, "fd00:20::/48", &rt) && rt.has_gw, "IPv6 route listed");
	CHECK_R(net_route_add(NULL, &rt), -EEXIST, "the very same route again");
	rt = (struct net_route){ .ifindex = v0.ifindex, .dst = P("10.20.0.0/16"), .has_gw = true,
				 .gw = A("10.10.0.253"), .priority = 50, .scope = -1 };
	/* With NLM_F_EXCL the kernel would refuse a second route to the same prefix and metric. */
	CHECK_R(net_route_add(NULL, &rt), 0, "same prefix and metric via another gateway: no NLM_F_EXCL");

	rt = (struct net_route){ .ifindex = v0.ifindex, .dst = P("10.22.0.0/16"), .has_gw = true,
				 .gw = A("192.0.2.1"), .scope = -1 };
	r = net_route_add(NULL, &rt);
	CHECK(r == -ENETUNREACH, "unreachable gateway: %d (%s)", r, strerror(-r));
	CHECK(net_ack_last()[0] != '\0', "kernel extended ack: \"%s\"", net_ack_last());
	CHECK_R(net_link_get_by_name(NULL, "tv0", &l), 0, "a later request");
	CHECK(net_ack_last()[0] == '\0', "clears the ack text");

	rt = (struct net_route){ .ifindex = v0.ifindex, .dst = P("0.0.0.0/0"), .has_gw = true,
				 .gw = A("10.10.0.254"), .scope = -1 };
	CHECK_R(net_route_add(NULL, &rt), 0, "default route");
	ifindex = 0;
	CHECK_R(net_default_route_ifindex(NULL, &ifindex), 0, "default route found");
	CHECK(ifindex == v0.ifindex, "default route via tv0 (%d)", ifindex);
}

static bool find_rule(int family, const char *src, uint32_t table, struct net_rule *ret)
{
	_cleanup_free_ struct net_rule *v = NULL;
	struct ip_addr a = A(src);
	size_t n = 0;

	if (net_rule_list(NULL, family, &v, &n) < 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i].has_src && ip_addr_equal(&v[i].src.addr, &a) && v[i].table == table) {
			*ret = v[i];
			return true;
		}
	}
	return false;
}

/* The routes of one table (0: of any) to a prefix, and the last of them. */
static size_t count_in_table(unsigned int table, const char *dst, struct net_route *ret)
{
	_cleanup_free_ struct net_route *v = NULL;
	struct ip_prefix p = P(dst);
	size_t n = 0, found = 0;

	if (net_route_list_table(NULL, table, AF_UNSPEC, &v, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if ((!table || v[i].table == table) && v[i].dst.len == p.len &&
		    ip_addr_equal(&v[i].dst.addr, &p.addr)) {
			*ret = v[i];
			found++;
		}
	}
	return found;
}

/* Rules, and routes replaced, deleted and listed by table (sbr's requests), on tv0. */
static void test_rules_tables(void)
{
	struct net_rule rule, got;
	struct net_route rt;
	struct net_link v0;

	if (!CHECK_R(net_link_get_by_name(NULL, "tv0", &v0), 0, "tv0 for rules"))
		return;
	rule = (struct net_rule){ .family = AF_INET, .has_src = true, .src = P("10.10.0.1/32"),
				  .table = 100 };
	CHECK_R(net_rule_add(NULL, &rule), 0, "rule from 10.10.0.1 lookup 100");
	CHECK(find_rule(AF_INET, "10.10.0.1", 100, &got) && got.plain && got.src.len == 32 &&
		      got.has_priority && got.priority > 0 && got.priority < 32766,
	      "listed, plain, with the kernel's priority %u", got.priority);
	rule = (struct net_rule){ .family = AF_INET6, .has_src = true, .src = P("fd00:10::1/128"),
				  .table = 5000 };
	CHECK_R(net_rule_add(NULL, &rule), 0, "rule from fd00:10::1 lookup 5000 (FRA_TABLE only)");
	CHECK(find_rule(AF_UNSPEC, "fd00:10::1", 5000, &got) && got.family == AF_INET6 && got.plain,
	      "IPv6 rule to table 5000 listed");
	CHECK(!find_rule(AF_INET, "fd00:10::1", 5000, &got), "not among the IPv4 rules");
	CHECK_R(net_rule_del(NULL, &got), 0, "delete it as listed");
	CHECK_R(net_rule_del(NULL, &got), -ENOENT, "delete it again");
	rule.table = 0;
	CHECK_R(net_rule_add(NULL, &rule), -EINVAL, "a rule without a table");
	CHECK(find_rule(AF_INET, "10.10.0.1", 100, &got) && net_rule_del(NULL, &got) == 0 &&
		      !find_rule(AF_INET, "10.10.0.1", 100, &got),
	      "IPv4 rule deleted");

	rt = (struct net_route){ .ifindex = v0.ifindex, .dst = P("10.23.0.0/16"), .has_src = true,
				 .src = A("10.10.0.1"), .protocol = RTPROT_STATIC, .table = 101,
				 .scope = RT_SCOPE_LINK };
	CHECK_R(net_route_add(NULL, &rt), 0, "route with a source hint, proto static, table 101");
	CHECK(count_in_table(101, "10.23.0.0/16", &rt) == 1 && rt.has_src &&
		      addr_is(&rt.src, "10.10.0.1") && rt.protocol == RTPROT_STATIC &&
		      rt.type == RTN_UNICAST && rt.ifindex == v0.ifindex,
	      "listed with its source, protocol %u, type %u", rt.protocol, rt.type);
	rt.mtu = 1400;
	CHECK_R(net_route_replace(NULL, &rt), 0, "replace it with an MTU");
	CHECK(count_in_table(101, "10.23.0.0/16", &rt) == 1 && rt.mtu == 1400,
	      "still one route, mtu %u", rt.mtu);
	CHECK(count_in_table(0, "10.23.0.0/16", &rt) == 1 && rt.table == 101,
	      "table 0: every table's routes, table 101's among them");
	CHECK(count_in_table(RT_TABLE_MAIN, "10.20.0.0/16", &rt) == 2, "main's two routes listed");
	CHECK(count_in_table(101, "10.23.0.0/16", &rt) == 1 && net_route_del(NULL, &rt) == 0,
	      "delete the table-101 route as listed");
	CHECK(count_in_table(101, "10.23.0.0/16", &rt) == 0, "gone");
	CHECK_R(net_route_del(NULL, &rt), -ESRCH, "delete it again");
}

static int result_build(struct cni_result *res, const char *ifname)
{
	struct cni_ip ip4 = { .address = P("10.30.0.2/24"), .has_gateway = true,
			      .gateway = A("10.30.0.1"), .iface = 0 };
	struct cni_ip ip6 = { .address = P("fd00:30::2/64"), .has_gateway = true,
			      .gateway = A("fd00:30::1"), .iface = 0 };
	struct cni_route r1 = { .dst = P("10.40.0.0/16"), .scope = -1 };
	struct cni_route r2 = { .dst = P("fd00:40::/48"), .scope = -1 };
	struct cni_route r3 = { .dst = P("10.50.0.0/16"), .has_gw = true, .gw = A("10.30.0.9"),
				.priority = 10, .mtu = 1300, .scope = -1 };
	struct cni_route r4 = { .dst = P("10.60.0.0/16"), .table = 200, .scope = -1 };

	if (cni_result_add_iface(res, ifname, NULL, "/proc/self/ns/net") < 0 ||
	    cni_result_add_ip(res, &ip4) < 0 || cni_result_add_ip(res, &ip6) < 0 ||
	    cni_result_add_route(res, &r1) < 0 || cni_result_add_route(res, &r2) < 0 ||
	    cni_result_add_route(res, &r3) < 0 || cni_result_add_route(res, &r4) < 0)
		return -ENOMEM;
	return 0;
}

static void test_iface(void)
{
	struct cni_result res = { 0 }, res_nope = { 0 };
	struct cni_err err = { 0 };
	struct net_link v1;
	struct net_route rt;
	char buf[64];
	bool tentative = true, found;

	if (!CHECK_R(net_link_get_by_name(NULL, "tv1", &v1), 0, "tv1 for iface_configure") ||
	    !CHECK_R(result_build(&res, "tv1"), 0, "result built"))
		goto out;
	/* A link whose IPv6 is off and lo off, as iface_configure must turn them on. */
	CHECK_R(sysctl_write("net/ipv6/conf/tv1/disable_ipv6", "1"), 0, "IPv6 off on tv1");
	CHECK_R(net_link_set_up(NULL, v1.ifindex, false), 0, "tv1 down");

	/* An IP that names another interface: refused before any change. */
	res.ips[0].iface = 1;
	CHECK_R(iface_configure(NULL, &v1, &res, false, &err), -EINVAL, "invalid interface index");
	CHECK(strcmp(err.msg, "failed to add IP addr 10.30.0.2/24 to \"tv1\": invalid interface index") == 0,
	      "message: %s", err.msg);
	CHECK(!has_addr(v1.ifindex, AF_INET, "10.30.0.2/24", NULL), "nothing added");
	res.ips[0].iface = 0;

	memset(&err, 0, sizeof(err));
	CHECK_R(result_build(&res_nope, "nope0"), 0, "result for a missing link built");
	CHECK_R(iface_configure(NULL, &(struct net_link){ .ifindex = 99999, .name = "nope0" },
				&res_nope, false, &err),
		-ENODEV, "configure a missing link");
	CHECK(strcmp(err.msg, "failed to add IP addr 10.30.0.2/24 to \"nope0\": No such device") == 0 &&
		      err.code == CNI_ERR_KERNEL,
	      "message: %s (code %d)", err.msg, err.code);

	/* Router advertisements and SLAAC on, as a fresh link has them: turned off. */
	CHECK_R(sysctl_write("net/ipv6/conf/tv1/accept_ra", "1"), 0, "accept_ra on on tv1");
	CHECK_R(sysctl_write("net/ipv6/conf/tv1/autoconf", "1"), 0, "autoconf on on tv1");
	memset(&err, 0, sizeof(err));
	if (!CHECK_R(iface_configure(NULL, &v1, &res, false, &err), 0, "iface_configure"))
		printf("# %s / %s\n", err.msg, err.details);
	CHECK(has_addr(v1.ifindex, AF_INET, "10.30.0.2/24", NULL), "IPv4 address added");
	CHECK(has_addr(v1.ifindex, AF_INET6, "fd00:30::2/64", &tentative), "IPv6 address added");
	CHECK(!tentative, "DAD finished before the routes (IPv6 gateway present)");
	CHECK(net_link_get_by_index(NULL, v1.ifindex, &v1) == 0 && (v1.flags & IFF_UP), "tv1 up");
	CHECK(strcmp(sysctl_get("net/ipv6/conf/tv1/disable_ipv6", buf, sizeof(buf)), "0") == 0,
	      "IPv6 enabled on tv1: %s", buf);
	CHECK(strcmp(sysctl_get("net/ipv6/conf/tv1/keep_addr_on_down", buf, sizeof(buf)), "1") ==
		      0,
	      "keep_addr_on_down: %s", buf);
	CHECK(strcmp(sysctl_get("net/ipv4/conf/tv1/arp_notify", buf, sizeof(buf)), "1") == 0,
	      "arp_notify: %s", buf);
	CHECK(strcmp(sysctl_get("net/ipv6/conf/tv1/ndisc_notify", buf, sizeof(buf)), "1") == 0,
	      "ndisc_notify: %s", buf);
	CHECK(strcmp(sysctl_get("net/ipv6/conf/tv1/accept_ra", buf, sizeof(buf)), "0") == 0,
	      "accept_ra off: %s", buf);
	CHECK(strcmp(sysctl_get("net/ipv6/conf/tv1/autoconf", buf, sizeof(buf)), "0") == 0,
	      "autoconf off: %s", buf);
	CHECK(find_route(v1.ifindex, "10.40.0.0/16", &rt) && rt.has_gw &&
		      ip_addr_equal(&rt.gw, &res.ips[0].gateway),
	      "IPv4 route via the IPv4 gateway");
	CHECK(find_route(v1.ifindex, "fd00:40::/48", &rt) && rt.has_gw &&
		      ip_addr_equal(&rt.gw, &res.ips[1].gateway),
	      "IPv6 route via the IPv6 gateway");
	memset(&rt, 0, sizeof(rt));
	found = find_route(v1.ifindex, "10.50.0.0/16", &rt);
	CHECK(found && rt.has_gw && ip_addr_equal(&rt.gw, &res.routes[2].gw) && rt.priority == 10 &&
		      rt.mtu == 1300,
	      "route with its own gw, metric %u, mtu %u", rt.priority, rt.mtu);
	memset(&rt, 0, sizeof(rt));
	found = find_route(v1.ifindex, "10.60.0.0/16", &rt);
	CHECK(found && rt.table == 200, "route in table %u", rt.table);

	memset(&err, 0, sizeof(err));
	CHECK_R(iface_check(NULL, "tv1", &res, &err), 0, "iface_check passes");

	/* Configuring twice: the addresses exist. */
	memset(&err, 0, sizeof(err));
	CHECK_R(iface_configure(NULL, &v1, &res, false, &err), -EEXIST, "configure twice");
	CHECK(strcmp(err.msg, "failed to add IP addr 10.30.0.2/24 to \"tv1\": File exists") == 0,
	      "message: %s", err.msg);

	/* A route that cannot be added reports the reference's message and the kernel's text. */
	{
		struct cni_result bad = { 0 };
		struct cni_route unreach = { .dst = P("10.70.0.0/16"), .has_gw = true,
					     .gw = A("192.0.2.1"), .priority = 5, .scope = -1 };

		memset(&err, 0, sizeof(err));
		if (cni_result_add_iface(&bad, "tv1", NULL, NULL) >= 0 &&
		    cni_result_add_route(&bad, &unreach) >= 0) {
			CHECK_R(iface_configure(NULL, &v1, &bad, false, &err), -ENETUNREACH, "bad route");
			CHECK(strcmp(err.msg, "failed to add route '10.70.0.0/16 via 192.0.2.1 dev tv1 metric 5 (Scope: 0, Table: 0)': Network is unreachable") == 0,
			      "message: %s", err.msg);
			CHECK(err.details[0] != '\0', "details: %s", err.details);
		}
		cni_result_free(&bad);
	}

	/* A route missing from the table fails the check. */
	{
		struct cni_route extra = { .dst = P("10.80.0.0/16"), .has_gw = true,
					   .gw = A("10.30.0.1"), .scope = -1 };

		if (cni_result_add_route(&res, &extra) >= 0) {
			memset(&err, 0, sizeof(err));
			CHECK_R(iface_check(NULL, "tv1", &res, &err), -ENOENT, "check with a missing route");
			CHECK(strcmp(err.msg, "Expected Route 10.80.0.0/16 via 10.30.0.1 not found in routing table") == 0 &&
				      err.code == CNI_ERR_CHECK_FAILED,
			      "message: %s (code %d)", err.msg, err.code);
			res.n_routes--;
		}
	}

	CHECK_R(addr_delete(v1.ifindex, &res.ips[0].address), 0, "delete 10.30.0.2/24");
	memset(&err, 0, sizeof(err));
	CHECK_R(iface_check(NULL, "tv1", &res, &err), -ENOENT, "iface_check fails after that");
	CHECK(strcmp(err.msg, "Failed to match addr 10.30.0.2/24 on interface tv1") == 0 &&
		      err.code == CNI_ERR_CHECK_FAILED,
	      "message: %s (code %d)", err.msg, err.code);
out:
	cni_result_free(&res);
	cni_result_free(&res_nope);
}

static void test_delete(void)
{
	struct net_link v0, l;

	if (!CHECK_R(net_link_get_by_name(NULL, "tv0", &v0), 0, "tv0 before delete"))
		return;
	CHECK_R(net_link_delete(NULL, v0.ifindex), 0, "delete tv0");
	CHECK_R(net_link_get_by_name(NULL, "tv1", &l), -ENODEV, "peer went with it");
	CHECK_R(net_link_delete(NULL, v0.ifindex), -ENODEV, "delete again");
	CHECK_R(net_link_set_up(NULL, v0.ifindex, true), -ENODEV, "set up on a deleted link");
}

static int in_new_netns(void *userdata)
{
	(void)userdata;
	test_raw_dump(1);
	return 1;
}

static int stop_at_first(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return -ECANCELED;
}

static int in_b_sysctl(void *userdata)
{
	char buf[16];

	(void)userdata;
	return strcmp(sysctl_get("net/ipv4/conf/hx1/arp_notify", buf, sizeof(buf)), "1") == 0;
}

/* Handles: every call through one lands in its netns while the caller stays in its own. */
static void test_handles(int fd_a, int fd_b)
{
	_cleanup_(net_ns_closep) struct net_ns *hb = NULL;
	_cleanup_(net_ns_closep) struct net_ns *ha = NULL;
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	_cleanup_free_ struct net_addr *v = NULL;
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	struct net_link x0, x1, l;
	struct net_child c;
	struct ip_prefix p = P("10.70.0.1/24");
	char bus[64] = "x";
	size_t n = 0;
	bool listed = false;

	if (!CHECK_R(veth_create("hx0", "hx1"), 0, "veth hx0/hx1") ||
	    !CHECK_R(net_link_get_by_name(NULL, "hx1", &x1), 0, "hx1 in A") ||
	    !CHECK_R(net_link_set_netns(NULL, x1.ifindex, fd_b), 0, "hx1 to B") ||
	    !CHECK_R(net_ns_open(fd_b, &hb), 0, "handle on B") ||
	    !CHECK_R(net_ns_open(-1, &ha), 0, "handle on the caller's netns"))
		return;
	CHECK_R(net_link_get_by_name(ha, "hx0", &x0), 0, "hx0 through the caller's handle");
	CHECK_R(net_link_get_by_name(hb, "hx0", &l), -ENODEV, "hx0 not in B");
	CHECK_R(net_link_get_by_name(hb, "hx1", &x1), 0, "hx1 through B's handle");
	/* A refusal ends its exchange: the socket stays and answers the next request. */
	CHECK_R(net_link_set_mtu(hb, x1.ifindex, 1400), 0, "MTU through B's handle");
	CHECK(net_link_get_by_index(hb, x1.ifindex, &l) == 0 && l.mtu == 1400, "MTU %u in B", l.mtu);
	/* An exchange stopped half-way: its socket goes, the next request gets a new one. */
	CHECK(nlsock_msg_new(RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof(ifi), &msg) == 0, "dump built");
	if (msg)
		CHECK_R(nlsock_talk(hb, NETLINK_ROUTE, msg, stop_at_first, NULL, NULL), -ECANCELED,
			"dump stopped at its first message");
	CHECK(net_link_get_by_name(hb, "hx1", &l) == 0 && l.ifindex == x1.ifindex,
	      "the next request through B's handle reads hx1, not the dump's rest");
	if (msg)
		CHECK_R(nlsock_talk(hb, NETLINK_ROUTE, msg, count_links, NULL, &n), 0, "dump of B");
	CHECK(n == 2, "B holds lo and hx1: %zu links", n);

	c = (struct net_child){ .kind = NET_CHILD_MACVLAN, .name = "hmv", .netns_fd = -1,
				.master_ifindex = x1.ifindex,
				.macvlan = { .mode = MACVLAN_MODE_BRIDGE } };
	CHECK_R(net_link_create(hb, &c), 0, "macvlan created in B through its handle");
	CHECK_R(net_link_get_by_name(NULL, "hmv", &l), -ENODEV, "not in A");
	CHECK(net_link_get_by_name(hb, "hmv", &l) == 0 && l.link_ifindex == x1.ifindex,
	      "in B, off hx1");
	CHECK_R(net_link_set_netns(hb, l.ifindex, fd_a), 0, "moved from B to A through B's handle");
	CHECK_R(net_link_get_by_name(NULL, "hmv", &l), 0, "now in A");
	CHECK_R(net_link_delete(ha, l.ifindex), 0, "deleted through the caller's handle");

	CHECK_R(net_addr_add(hb, x1.ifindex, &p), 0, "address through B's handle");
	if (CHECK_R(net_addr_list(hb, x1.ifindex, AF_INET, &v, &n), 0, "addresses of hx1 in B"))
		for (size_t i = 0; i < n; i++)
			listed |= v[i].prefix.len == 24 && addr_is(&v[i].prefix.addr, "10.70.0.1");
	CHECK(listed, "10.70.0.1/24 listed in B");
	CHECK(!has_addr(x1.ifindex, AF_INET, "10.70.0.1/24", NULL), "nothing of it in A");

	CHECK_R(net_ethtool_bus_info(hb, "hx1", bus, sizeof(bus)), 0, "ethtool through B's handle");
	CHECK_R(net_ethtool_bus_info(NULL, "hx1", bus, sizeof(bus)), -ENODEV, "no hx1 for A's ethtool");

	if (CHECK_R(cni_result_add_iface(&res, "hx1", NULL, "/proc/self/ns/net"), 0, "result"))
		CHECK_R(iface_configure(hb, &x1, &res, false, &err), 0, "iface_configure through B's handle");
	CHECK(net_link_get_by_index(hb, x1.ifindex, &l) == 0 && (l.flags & IFF_UP), "hx1 up in B");
	CHECK_R(net_ns_run(hb, in_b_sysctl, NULL), 1, "hx1's sysctl written in B");
	CHECK(nsfd_is_current(fd_a) == 1, "the caller never left A");
	cni_result_free(&res);
	net_ns_close(NULL);
}

/* A netns held only by a descriptor: empty but for lo, and the caller never leaves its own. */
static void test_netns_new(void)
{
	_cleanup_close_ int fd = -1;
	_cleanup_close_ int cur = -1;

	CHECK_R(nsfd_new(&fd), 0, "nsfd_new");
	CHECK(nsfd_is_current(fd) == 0, "nsfd_new: the caller stays in its netns");
	CHECK_R(nsfd_run(fd, in_new_netns, NULL), 1, "nsfd_new: a netns with lo only");
	CHECK_R(nsfd_open_current(&cur), 0, "nsfd_open_current");
	CHECK(nsfd_is_current(cur) == 1, "nsfd_open_current: the caller's netns");
}

int main(void)
{
	_cleanup_close_ int fd_a = -1;
	_cleanup_close_ int fd_b = -1;
	_cleanup_close_ int fd_self = -1;
	int r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (unshare(CLONE_NEWNET) < 0) {
		if (errno == EPERM) {
			printf("# SKIP: cannot create a network namespace (not root)\n");
			return 77;
		}
		fprintf(stderr, "unshare: %s\n", strerror(errno));
		return 1;
	}
	/* Netns A: the test's own; B: a move target, alive only through fd_b. */
	r = nsfd_open("/proc/thread-self/ns/net", &fd_a);
	if (r < 0) {
		fprintf(stderr, "nsfd_open A: %s\n", strerror(-r));
		return 1;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "unshare B: %s\n", strerror(errno));
		return 1;
	}
	r = nsfd_open("/proc/thread-self/ns/net", &fd_b);
	if (r < 0 || setns(fd_a, CLONE_NEWNET) < 0) {
		fprintf(stderr, "netns B: %s\n", r < 0 ? strerror(-r) : strerror(errno));
		return 1;
	}

	CHECK(nsfd_is_current(fd_a) == 1, "nsfd_is_current: A");
	CHECK(nsfd_is_current(fd_b) == 0, "nsfd_is_current: not B");
	CHECK_R(nsfd_open("/nonexistent/netns", &fd_self), -ENOENT, "nsfd_open missing path");
	{
		char plain[] = "/tmp/test-net-file-XXXXXX";
		int tfd = mkstemp(plain);

		/* What a netns bind mount leaves behind once unmounted. */
		CHECK(tfd >= 0 && close(tfd) == 0, "nsfd_open: a regular file to open");
		CHECK_R(nsfd_open(plain, &fd_self), -EINVAL, "nsfd_open a regular file");
		unlink(plain);
	}
	/* Refused unopened: opening a device can act, opening a FIFO blocks. */
	CHECK_R(nsfd_open("/dev/null", &fd_self), -EMEDIUMTYPE, "nsfd_open a device");
	CHECK_R(nsfd_open("/", &fd_self), -EMEDIUMTYPE, "nsfd_open a directory");
	CHECK_R(nsfd_open("/proc/self/ns/mnt", &fd_self), -EMEDIUMTYPE,
		"nsfd_open a namespace of another kind");
	{
		char fifo[] = "/tmp/test-net-fifo-XXXXXX";
		int tfd = mkstemp(fifo);

		CHECK(tfd >= 0 && close(tfd) == 0 && unlink(fifo) == 0 && mkfifo(fifo, 0600) == 0,
		      "nsfd_open: a FIFO to open");
		/* A hang here fails the test by its timeout. */
		CHECK_R(nsfd_open(fifo, &fd_self), -EMEDIUMTYPE, "nsfd_open a FIFO");
		unlink(fifo);
	}
	r = nsfd_open("/proc/self/ns/net", &fd_self);
	CHECK(r == 0 && nsfd_is_current(fd_self) == 1, "nsfd_open /proc/self/ns/net");

	test_hwaddr();
	test_build();
	test_sysctl();
	test_links(fd_a, fd_b);
	test_addrs_routes();
	test_rules_tables();
	test_iface();
	test_delete();
	test_handles(fd_a, fd_b);
	test_netns_new();

	printf("1..%d\n# %d passed, %d failed\n", n_pass + n_fail, n_pass, n_fail);
	return n_fail ? 1 : 0;
}
