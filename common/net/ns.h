/* A network namespace as common/net talks to it: its descriptor and the sockets opened in it */
#pragma once

struct net_ns;
struct nl_sock;

/**
 * net_ns_open() - a handle through which common/net talks to a netns from outside it
 * @netns_fd: the netns (borrowed: it must stay open as long as the handle), -1
 *            for the caller's own (whose requests come from there: its socket is
 *            made at the first)
 * @ret: handle, written only on success; release with net_ns_close()
 *
 * Its netlink socket is opened inside the netns at once, as `ip -n` does, so
 * every request after goes there without the caller entering the netns; the
 * RDMA netlink and the ioctl socket are opened there on first use, and so is
 * the netlink socket of the caller's own netns. Every request through the
 * handle goes out on its one socket of that protocol.
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_ns_open(int netns_fd, struct net_ns **ret);

/**
 * net_ns_close() - close a handle's sockets and free it
 * @ns: handle, may be NULL
 */
void net_ns_close(struct net_ns *ns);

static inline void net_ns_closep(struct net_ns **ns)
{
	net_ns_close(*ns);
}

/**
 * net_ns_run() - run a function inside the handle's netns and come back, as nsfd_run()
 * @ns: handle, NULL for the caller's netns (then @fn simply runs)
 * @fn: function; its return value is passed through
 * @userdata: its argument
 *
 * For what only works from inside (sysctl under /proc/sys).
 *
 * Return: what @fn returned, or negative errno when the netns cannot be entered.
 */
int net_ns_run(struct net_ns *ns, int (*fn)(void *userdata), void *userdata);

/**
 * net_ns_socket() - the handle's netlink socket of a protocol, opened in its netns
 * @ns: handle
 * @protocol: NETLINK_ROUTE or NETLINK_RDMA
 * @ret: socket (the handle keeps it), written only on success
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_ns_socket(struct net_ns *ns, int protocol, struct nl_sock **ret);

/**
 * net_ns_socket_drop() - forget a socket after a failed exchange, so that no
 *                        reply left unread on it answers the next request
 * @ns: handle
 * @protocol: NETLINK_ROUTE or NETLINK_RDMA
 */
void net_ns_socket_drop(struct net_ns *ns, int protocol);

/**
 * net_ns_inet_socket() - the handle's AF_INET datagram socket (for ioctls), opened in its netns
 * @ns: handle
 * @ret_fd: descriptor (the handle keeps it), written only on success
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_ns_inet_socket(struct net_ns *ns, int *ret_fd);
