/* A network namespace as common/net talks to it: its descriptor and the sockets opened in it */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <netlink/socket.h>

#include "common/net/nlsock.h"
#include "common/net/ns.h"
#include "common/util/cleanup.h"
#include "common/util/nsfd.h"

struct net_ns {
	int fd;                 /* -1: the caller's own netns, where its first request is made */
	struct nl_sock *route;
	struct nl_sock *rdma;
	int inet_fd;
};

struct sock_open {
	bool inet;              /* an AF_INET datagram socket, else netlink of @protocol */
	int protocol;
	struct nl_sock *sk;
	int fd;
};

static int sock_open_here(void *userdata)
{
	struct sock_open *o = userdata;

	if (!o->inet)
		return nlsock_open(o->protocol, &o->sk);
	o->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return o->fd < 0 ? -errno : 0;
}

/* A socket belongs to the netns it was made in: it is made in the handle's. */
static int sock_open_in(struct net_ns *ns, struct sock_open *o)
{
	return net_ns_run(ns, sock_open_here, o);
}

int net_ns_open(int netns_fd, struct net_ns **ret)
{
	struct net_ns *ns = calloc(1, sizeof(*ns));
	struct sock_open o = { .protocol = NETLINK_ROUTE };
	int r;

	if (!ns)
		return -ENOMEM;
	*ns = (struct net_ns){ .fd = netns_fd, .inet_fd = -1 };
	/* The caller's own netns needs no trip there: its socket waits for a first request. */
	if (netns_fd >= 0) {
		r = sock_open_in(ns, &o);
		if (r < 0) {
			free(ns);
			return r;
		}
		ns->route = o.sk;
	}
	*ret = ns;
	return 0;
}

void net_ns_close(struct net_ns *ns)
{
	if (!ns)
		return;
	if (ns->route)
		nl_socket_free(ns->route);
	if (ns->rdma)
		nl_socket_free(ns->rdma);
	if (ns->inet_fd >= 0)
		close(ns->inet_fd);
	free(ns);
}

int net_ns_run(struct net_ns *ns, int (*fn)(void *userdata), void *userdata)
{
	if (!ns || ns->fd < 0)
		return fn(userdata);
	return nsfd_run(ns->fd, fn, userdata);
}

static struct nl_sock **slot(struct net_ns *ns, int protocol)
{
	return protocol == NETLINK_RDMA ? &ns->rdma : &ns->route;
}

int net_ns_socket(struct net_ns *ns, int protocol, struct nl_sock **ret)
{
	struct nl_sock **s = slot(ns, protocol);
	struct sock_open o = { .protocol = protocol };
	int r;

	if (!*s) {
		r = sock_open_in(ns, &o);
		if (r < 0)
			return r;
		*s = o.sk;
	}
	*ret = *s;
	return 0;
}

void net_ns_socket_drop(struct net_ns *ns, int protocol)
{
	struct nl_sock **s = slot(ns, protocol);

	if (*s)
		nl_socket_free(*s);
	*s = NULL;
}

int net_ns_inet_socket(struct net_ns *ns, int *ret_fd)
{
	struct sock_open o = { .inet = true, .fd = -1 };
	int r;

	if (ns->inet_fd < 0) {
		r = sock_open_in(ns, &o);
		if (r < 0)
			return r;
		ns->inet_fd = o.fd;
	}
	*ret_fd = ns->inet_fd;
	return 0;
}
