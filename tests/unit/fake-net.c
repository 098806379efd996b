/* A fake of common/net for unit tests: an in-memory kernel that logs every call and fails on demand */
#include <errno.h>
#include <net/if_arp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/attach/iface.h"
#include "common/cni/conf.h"
#include "common/cni/ipam.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/ns.h"
#include "common/net/route.h"
#include "common/net/sysctl.h"
#include "common/util/error.h"
#include "common/util/nsfd.h"
#include "tests/unit/fake-net.h"

struct fake_net fake_net;

void fake_net_reset(const char *ipam_result)
{
	memset(&fake_net, 0, sizeof(fake_net));
	strcpy(fake_net.ns_path[0], "host");
	fake_net.next_ifindex = 1;
	fake_net.ipam_result = ipam_result;
	net_ack_clear();
}

int fake_net_add_netns(const char *path)
{
	for (int ns = 1; ns < FAKE_NET_MAX_NS; ns++) {
		if (!fake_net.ns_path[ns][0]) {
			snprintf(fake_net.ns_path[ns], sizeof(fake_net.ns_path[ns]), "%s", path);
			return ns;
		}
	}
	return -ENOSPC;
}

static struct fake_link *find_index(int ns, int ifindex)
{
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++) {
		struct fake_link *l = &fake_net.links[i];

		if (l->used && l->ns == ns && l->link.ifindex == ifindex)
			return l;
	}
	return NULL;
}

static struct fake_link *find_name(int ns, const char *name)
{
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++) {
		struct fake_link *l = &fake_net.links[i];

		if (l->used && l->ns == ns && strcmp(l->link.name, name) == 0)
			return l;
	}
	return NULL;
}

void fake_net_destroy_netns(int ns)
{
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++) {
		struct fake_link *l = &fake_net.links[i];

		if (!l->used || l->ns != ns)
			continue;
		if (strcmp(l->link.kind, "ipoib") == 0) {
			l->ns = 0;
			snprintf(l->link.name, sizeof(l->link.name), "dev%d", l->link.ifindex);
			l->link.flags &= ~(unsigned int)IFF_UP;
		} else {
			l->used = false;
		}
	}
	fake_net.ns_path[ns][0] = '\0';
}

static struct fake_link *new_link(int ns, const char *name)
{
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++) {
		struct fake_link *l = &fake_net.links[i];

		if (!l->used) {
			memset(l, 0, sizeof(*l));
			l->used = true;
			l->ns = ns;
			l->link.ifindex = fake_net.next_ifindex++;
			snprintf(l->link.name, sizeof(l->link.name), "%s", name);
			return l;
		}
	}
	return NULL;
}

struct net_link *fake_net_add_link(int ns, const char *name, const char *kind,
				   unsigned short type, unsigned int mtu)
{
	struct fake_link *l = new_link(ns, name);

	if (!l)
		return NULL;
	snprintf(l->link.kind, sizeof(l->link.kind), "%s", kind);
	l->link.type = type;
	l->link.mtu = mtu;
	return &l->link;
}

struct net_link *fake_net_find(int ns, const char *name)
{
	struct fake_link *l = find_name(ns, name);

	return l ? &l->link : NULL;
}

void fake_net_place(struct net_link *link, int ns)
{
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++)
		if (&fake_net.links[i].link == link)
			fake_net.links[i].ns = ns;
}

size_t fake_net_count(int ns)
{
	size_t n = 0;

	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++)
		n += fake_net.links[i].used && fake_net.links[i].ns == ns;
	return n;
}

const char *fake_net_sysctl(int ns, const char *path)
{
	for (size_t i = fake_net.n_sysctls; i-- > 0;)
		if (fake_net.sysctls[i].ns == ns && strcmp(fake_net.sysctls[i].path, path) == 0)
			return fake_net.sysctls[i].value;
	return NULL;
}

static const char *ns_label(int ns)
{
	static char buf[16];

	if (ns == 0)
		return "host";
	snprintf(buf, sizeof(buf), "ns%d", ns);
	return buf;
}

/* How many of SIGTERM, SIGINT and SIGHUP are blocked now. */
static int termination_blocked(void)
{
	sigset_t cur;

	sigprocmask(SIG_BLOCK, NULL, &cur);
	return (sigismember(&cur, SIGTERM) == 1) + (sigismember(&cur, SIGINT) == 1) +
	       (sigismember(&cur, SIGHUP) == 1);
}

bool fake_net_termination_held(void)
{
	return termination_blocked() > 0;
}

int fake_net_op(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = snprintf(fake_net.log + fake_net.log_len, sizeof(fake_net.log) - fake_net.log_len,
		     "%s: %s%s\n", ns_label(fake_net.current), line,
		     termination_blocked() == 3 ? " [blocked]" : "");
	if (n > 0 && fake_net.log_len + (size_t)n < sizeof(fake_net.log))
		fake_net.log_len += (size_t)n;
	net_ack_clear();
	if (++fake_net.ops != fake_net.fail_at)
		return 0;
	snprintf(line, sizeof(line), "fake: operation %u fails", fake_net.ops);
	net_ack_set(line);
	return -fake_net.fail_errno;
}

const char *fake_net_log_lines(void)
{
	return fake_net.log;
}

/* --- common/net/link.h ----------------------------------------------------------------- */

static int get_link(struct fake_link *l, struct net_link *ret)
{
	if (!l)
		return -ENODEV;
	*ret = l->link;
	return 0;
}

static int here_link_get_by_name(const char *name, struct net_link *ret)
{
	int r = fake_net_op("get %s", name);

	return r < 0 ? r : get_link(find_name(fake_net.current, name), ret);
}

static int here_link_get_by_index(int ifindex, struct net_link *ret)
{
	int r = fake_net_op("get #%d", ifindex);

	return r < 0 ? r : get_link(find_index(fake_net.current, ifindex), ret);
}

static int here_link_get_by_hwaddr(const uint8_t *hwaddr, size_t len, struct net_link *ret)
{
	char text[3 * HWADDR_MAX];
	int r = fake_net_op("get mac %s", hwaddr_format(hwaddr, len, text, sizeof(text)));

	if (r < 0)
		return r;
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++) {
		struct fake_link *l = &fake_net.links[i];

		if (l->used && l->ns == fake_net.current && l->link.hwaddr_len == len &&
		    memcmp(l->link.hwaddr, hwaddr, len) == 0)
			return get_link(l, ret);
	}
	return -ENODEV;
}

static int here_link_get_by_alias(const char *alias, struct net_link *ret)
{
	int r = fake_net_op("get alias \"%s\"", alias);

	if (r < 0)
		return r;
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++) {
		struct fake_link *l = &fake_net.links[i];

		if (l->used && l->ns == fake_net.current && strcmp(l->link.alias, alias) == 0)
			return get_link(l, ret);
	}
	return -ENODEV;
}

static int here_link_find(bool (*match)(const struct net_link *link, void *data), void *data,
		  struct net_link *ret)
{
	int r = fake_net_op("find");

	if (r < 0)
		return r;
	for (size_t i = 0; i < FAKE_NET_MAX_LINKS; i++) {
		struct fake_link *l = &fake_net.links[i];

		if (l->used && l->ns == fake_net.current && match(&l->link, data))
			return get_link(l, ret);
	}
	return -ENODEV;
}

/* The checks the kernel's ipoib and macvlan newlink make, and what the child inherits. */
static int create_child(const struct net_child *c, int ns, const struct fake_link *master)
{
	struct fake_link *l;

	if (!master)
		return -ENODEV;
	if (find_name(ns, c->name))
		return -EEXIST;
	if (c->kind == NET_CHILD_IPOIB) {
		if (master->link.type != ARPHRD_INFINIBAND)
			return -ENODEV;
		if (master->link.link_ifindex)
			return -EINVAL;
		if (c->ipoib.pkey == 0 || c->ipoib.pkey == 0x8000 || c->ipoib.mode > 1)
			return -EINVAL;
	}
	l = new_link(ns, c->name);
	if (!l)
		return -ENOSPC;
	l->link.link_ifindex = master->link.ifindex;
	l->link.type = master->link.type;
	l->link.mtu = c->mtu ? c->mtu : master->link.mtu;
	if (c->up)
		l->link.flags |= IFF_UP;
	l->link.hwaddr_len = master->link.hwaddr_len;
	memcpy(l->link.hwaddr, master->link.hwaddr, sizeof(l->link.hwaddr));
	/* A child gets its own queue pair number: the first 4 bytes of an IPoIB address. */
	l->link.hwaddr[3] = (uint8_t)l->link.ifindex;
	if (c->kind == NET_CHILD_IPOIB) {
		strcpy(l->link.kind, "ipoib");
		l->link.ipoib_pkey = c->ipoib.pkey | 0x8000;
		l->link.ipoib_mode = c->ipoib.mode;
		l->link.ipoib_umcast = c->ipoib.umcast;
	} else {
		strcpy(l->link.kind, "macvlan");
		l->link.macvlan_mode = c->macvlan.mode;
	}
	return 0;
}

static int here_link_create(const struct net_child *c)
{
	int ns = c->netns_fd < 0 ? fake_net.current : c->netns_fd - FAKE_NET_FD_BASE;
	struct fake_link *master = find_index(fake_net.current, c->master_ifindex);
	int r;

	if (c->kind == NET_CHILD_IPOIB)
		r = fake_net_op("create ipoib %s link=%s pkey=0x%04x mode=%u umcast=%u mtu=%u%s%s",
				c->name, master ? master->link.name : "?", c->ipoib.pkey,
				c->ipoib.mode, c->ipoib.umcast, c->mtu, c->netns_fd < 0 ? "" : " in ",
				c->netns_fd < 0 ? "" : ns_label(ns));
	else
		r = fake_net_op("create macvlan %s link=%s mode=%u mtu=%u%s%s%s", c->name,
				master ? master->link.name : "?", c->macvlan.mode, c->mtu,
				c->up ? " up" : "", c->netns_fd < 0 ? "" : " in ",
				c->netns_fd < 0 ? "" : ns_label(ns));
	return r < 0 ? r : create_child(c, ns, master);
}

static int here_link_delete(int ifindex)
{
	struct fake_link *l = find_index(fake_net.current, ifindex);
	int r = fake_net_op("delete %s", l ? l->link.name : "?");

	if (r < 0)
		return r;
	if (!l)
		return -ENODEV;
	l->used = false;
	return 0;
}

static int here_link_move(int ifindex, int netns_fd, const char *alias)
{
	int ns = netns_fd - FAKE_NET_FD_BASE;
	struct fake_link *l = find_index(fake_net.current, ifindex);
	int r = fake_net_op("move %s to %s%s%s%s", l ? l->link.name : "?", ns_label(ns),
			    alias ? " alias \"" : "", alias ? alias : "", alias ? "\"" : "");

	if (r < 0)
		return r;
	if (!l)
		return -ENODEV;
	if (ns < 0 || ns >= FAKE_NET_MAX_NS || !fake_net.ns_path[ns][0])
		return -EBADF;
	if (find_name(ns, l->link.name))
		return fake_net.move_clash_einval ? -EINVAL : -EEXIST;
	/* The kernel closes a device it moves. */
	l->ns = ns;
	l->link.flags &= ~(unsigned int)IFF_UP;
	if (alias)
		snprintf(l->link.alias, sizeof(l->link.alias), "%s", alias);
	return 0;
}

static int here_link_set_netns(int ifindex, int netns_fd)
{
	return here_link_move(ifindex, netns_fd, NULL);
}

void (*fake_net_renamed)(int ifindex, const char *name);

static int here_link_set_name(int ifindex, const char *name)
{
	struct fake_link *l = find_index(fake_net.current, ifindex);
	int r = fake_net_op("rename %s to %s", l ? l->link.name : "?", name);

	if (r < 0)
		return r;
	if (!l)
		return -ENODEV;
	if (l->link.flags & IFF_UP)
		return -EBUSY;
	if (find_name(fake_net.current, name))
		return -EEXIST;
	snprintf(l->link.name, sizeof(l->link.name), "%s", name);
	if (fake_net_renamed)
		fake_net_renamed(ifindex, name);
	return 0;
}

static int here_link_set_up(int ifindex, bool up)
{
	struct fake_link *l = find_index(fake_net.current, ifindex);
	int r = fake_net_op("%s %s", up ? "up" : "down", l ? l->link.name : "?");

	if (r < 0)
		return r;
	if (!l)
		return -ENODEV;
	if (up)
		l->link.flags |= IFF_UP;
	else
		l->link.flags &= ~(unsigned int)IFF_UP;
	return 0;
}

static int here_link_set_mtu(int ifindex, unsigned int mtu)
{
	struct fake_link *l = find_index(fake_net.current, ifindex);
	int r = fake_net_op("mtu %s %u", l ? l->link.name : "?", mtu);

	if (r < 0)
		return r;
	if (!l)
		return -ENODEV;
	l->link.mtu = mtu;
	return 0;
}

static int here_link_set_alias(int ifindex, const char *alias)
{
	struct fake_link *l = find_index(fake_net.current, ifindex);
	int r = fake_net_op("alias %s \"%s\"", l ? l->link.name : "?", alias);

	if (r < 0)
		return r;
	if (!l)
		return -ENODEV;
	snprintf(l->link.alias, sizeof(l->link.alias), "%s", alias);
	return 0;
}

static int here_default_route_ifindex(int *ret_ifindex)
{
	int r = fake_net_op("default route");

	if (r < 0)
		return r;
	(void)ret_ifindex;
	return -ENOENT;
}

/* --- common/util/nsfd.h ------------------------------------------------------------------ */

int nsfd_open(const char *path, int *ret_fd)
{
	int r = fake_net_op("open netns %s", path);

	if (r < 0)
		return r;
	for (int ns = 1; ns < FAKE_NET_MAX_NS; ns++) {
		/* The plugin's cleanup close()s this number: EBADF, harmless. */
		if (strcmp(fake_net.ns_path[ns], path) == 0) {
			*ret_fd = FAKE_NET_FD_BASE + ns;
			return 0;
		}
	}
	return -ENOENT;
}

int nsfd_is_current(int fd)
{
	return fd - FAKE_NET_FD_BASE == fake_net.current;
}

int nsfd_run(int fd, int (*fn)(void *userdata), void *userdata)
{
	int ns = fd - FAKE_NET_FD_BASE;
	int saved = fake_net.current;
	int r;

	if (ns < 0 || ns >= FAKE_NET_MAX_NS || !fake_net.ns_path[ns][0])
		return -EBADF;
	fake_net.current = ns;
	r = fn(userdata);
	fake_net.current = saved;
	return r;
}

/* --- common/net/sysctl.h ----------------------------------------------------------------- */

/* /proc/sys/net/ipv4/conf/<ifname>/... exists only while the link does. */
static bool sysctl_exists(const char *path)
{
	const char *p = strstr(path, "/conf/");
	char ifname[IFNAMSIZ + 1];
	size_t n;

	if (!p)
		return true;
	p += strlen("/conf/");
	n = strcspn(p, "/");
	if (n >= sizeof(ifname))
		return false;
	memcpy(ifname, p, n);
	ifname[n] = '\0';
	return strcmp(ifname, "all") == 0 || strcmp(ifname, "default") == 0 ||
	       find_name(fake_net.current, ifname);
}

int sysctl_write(const char *path, const char *value)
{
	struct fake_sysctl *s;
	int r = fake_net_op("sysctl %s=%s", path, value);

	if (r < 0)
		return r;
	if (!sysctl_exists(path))
		return -ENOENT;
	if (fake_net.n_sysctls == sizeof(fake_net.sysctls) / sizeof(fake_net.sysctls[0]))
		return -ENOSPC;
	s = &fake_net.sysctls[fake_net.n_sysctls++];
	s->ns = fake_net.current;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->value, sizeof(s->value), "%s", value);
	return 0;
}

int sysctl_read(const char *path, char *buf, unsigned long len)
{
	const char *v;
	int r = fake_net_op("sysctl %s", path);

	if (r < 0)
		return r;
	v = fake_net_sysctl(fake_net.current, path);
	if (!v)
		return -ENOENT;
	snprintf(buf, len, "%s", v);
	return 0;
}

/* --- common/attach/iface.h --------------------------------------------------------------- */

static int here_iface_configure(const struct net_link *link, const struct cni_result *res,
				struct cni_err *err)
{
	struct fake_link *l;
	int r = fake_net_op("configure %s (%zu ips, %zu routes)", link->name, res->n_ips,
			    res->n_routes);

	if (r < 0)
		return net_err_set(err, CNI_ERR_KERNEL, r, "failed to configure \"%s\"", link->name);
	l = find_index(fake_net.current, link->ifindex);
	if (!l)
		return net_err_set(err, CNI_ERR_KERNEL, -ENODEV, "failed to add IP addr to \"%s\"",
				   link->name);
	l->link.flags |= IFF_UP;
	return 0;
}

static int here_iface_check(const char *ifname, const struct cni_result *res, struct cni_err *err)
{
	int r = fake_net_op("check %s (%zu ips, %zu routes)", ifname, res->n_ips, res->n_routes);

	if (r < 0)
		return cni_err_set(err, CNI_ERR_CHECK_FAILED, r, "check of \"%s\" failed", ifname);
	return 0;
}

/* --- common/cni/ipam.h ------------------------------------------------------------------- */

int cni_ipam_run(const struct cni_ctx *ctx, enum cni_command cmd, struct cni_result *ret,
		 struct cni_err *err)
{
	const struct cni_conf *conf = &ctx->conf;
	const char *json = fake_net.ipam_result ? fake_net.ipam_result : "{}";
	int r;

	if (!cni_conf_has_ipam(conf))
		return 0;
	r = fake_net_op("ipam %s %s", cni_command_name(cmd), conf->ipam_type);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, r, "fake IPAM %s fails",
				   cni_command_name(cmd));
	switch (cmd) {
	case CNI_CMD_ADD:
		r = cni_result_parse(json, strlen(json), conf->cni_version, ret, err);
		if (r < 0)
			return r;
		fake_net.ipam_allocated++;
		return 0;
	case CNI_CMD_DEL:
		if (fake_net.ipam_allocated > 0)
			fake_net.ipam_allocated--;
		return 0;
	case CNI_CMD_CHECK:
	case CNI_CMD_STATUS:
	case CNI_CMD_GC:
		return 0;
	case CNI_CMD_NONE:
	case CNI_CMD_VERSION:
	case CNI_CMD_UNKNOWN:
		break;
	}
	return -EINVAL;
}

/* The real one's contract, over the fake IPAM: DEL, a failure ignored. */
void cni_ipam_undo(const struct cni_ctx *ctx)
{
	struct cni_err ignored = { 0 };

	(void)cni_ipam_run(ctx, CNI_CMD_DEL, NULL, &ignored);
}

/* --- common/net/ns.h ---------------------------------------------------------------------- */

/* A handle is the number of its netns; operations through it run as if in that netns. */
struct net_ns {
	int ns;
};

int net_ns_open(int netns_fd, struct net_ns **ret)
{
	struct net_ns *h = malloc(sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->ns = netns_fd < 0 ? fake_net.current : netns_fd - FAKE_NET_FD_BASE;
	*ret = h;
	return 0;
}

void net_ns_close(struct net_ns *ns)
{
	free(ns);
}

int net_ns_run(struct net_ns *ns, int (*fn)(void *userdata), void *userdata)
{
	return ns ? nsfd_run(FAKE_NET_FD_BASE + ns->ns, fn, userdata) : fn(userdata);
}

/*
 * The fake kernel is not behind sockets: the real code linked beside it
 * (rdma.c, whose nlsock_talk() is the fake RDMA kernel's) never opens one,
 * and one that does fails the way a kernel without the protocol would.
 */
int net_ns_socket(struct net_ns *ns, int protocol, struct nl_sock **ret)
{
	(void)ns;
	(void)protocol;
	*ret = NULL;
	return -EPROTONOSUPPORT;
}

void net_ns_socket_drop(struct net_ns *ns, int protocol)
{
	(void)ns;
	(void)protocol;
}

int fake_net_enter(struct net_ns *ns)
{
	int saved = fake_net.current;

	if (ns)
		fake_net.current = ns->ns;
	return saved;
}

/* --- the public entry points: each runs in the handle's netns ------------------------- */

int net_link_get_by_name(struct net_ns *ns, const char *name, struct net_link *ret)
{
	return IN_NS(ns, here_link_get_by_name(name, ret));
}

int net_link_get_by_index(struct net_ns *ns, int ifindex, struct net_link *ret)
{
	return IN_NS(ns, here_link_get_by_index(ifindex, ret));
}

int net_link_get_by_hwaddr(struct net_ns *ns, const uint8_t *hwaddr, size_t len,
			   struct net_link *ret)
{
	return IN_NS(ns, here_link_get_by_hwaddr(hwaddr, len, ret));
}

int net_link_get_by_alias(struct net_ns *ns, const char *alias, struct net_link *ret)
{
	return IN_NS(ns, here_link_get_by_alias(alias, ret));
}

int net_link_find(struct net_ns *ns, bool (*match)(const struct net_link *link, void *data),
		  void *data, struct net_link *ret)
{
	return IN_NS(ns, here_link_find(match, data, ret));
}

int net_link_create(struct net_ns *ns, const struct net_child *c)
{
	return IN_NS(ns, here_link_create(c));
}

int net_link_delete(struct net_ns *ns, int ifindex)
{
	return IN_NS(ns, here_link_delete(ifindex));
}

int net_link_move(struct net_ns *ns, int ifindex, int netns_fd, const char *alias)
{
	return IN_NS(ns, here_link_move(ifindex, netns_fd, alias));
}

int net_link_set_netns(struct net_ns *ns, int ifindex, int netns_fd)
{
	return IN_NS(ns, here_link_set_netns(ifindex, netns_fd));
}

int net_link_set_name(struct net_ns *ns, int ifindex, const char *name)
{
	return IN_NS(ns, here_link_set_name(ifindex, name));
}

int net_link_set_up(struct net_ns *ns, int ifindex, bool up)
{
	return IN_NS(ns, here_link_set_up(ifindex, up));
}

int net_link_set_mtu(struct net_ns *ns, int ifindex, unsigned int mtu)
{
	return IN_NS(ns, here_link_set_mtu(ifindex, mtu));
}

int net_link_set_alias(struct net_ns *ns, int ifindex, const char *alias)
{
	return IN_NS(ns, here_link_set_alias(ifindex, alias));
}

int net_default_route_ifindex(struct net_ns *ns, int *ret_ifindex)
{
	return IN_NS(ns, here_default_route_ifindex(ret_ifindex));
}

int iface_configure(struct net_ns *ns, const struct net_link *link, const struct cni_result *res,
		    bool autoconf, struct cni_err *err)
{
	(void)autoconf;
	return IN_NS(ns, here_iface_configure(link, res, err));
}

int iface_check(struct net_ns *ns, const char *ifname, const struct cni_result *res,
	        struct cni_err *err)
{
	return IN_NS(ns, here_iface_check(ifname, res, err));
}
