/* Netlink requests in a handle's netns: the handle gives the socket, nlsock.c talks on it */
#include <errno.h>
#include <stdbool.h>

#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/net/ns.h"
#include "common/util/cleanup.h"

/* What one request asks for: its reply callbacks and their data. */
struct talk {
	nlsock_msg_cb cb;
	nlsock_obj_cb obj_cb;
	void *data;
};

/*
 * On the handle's socket, or on a new one in the caller's netns. A handle's
 * socket whose exchange stopped before the kernel's last word is dropped:
 * what is left unread on it must not answer the next request, and a retried
 * dump goes out on a new socket. A refusal (an error ack) ends an exchange
 * cleanly and keeps the socket.
 */
static int talk_once(struct net_ns *ns, int protocol, struct nl_msg *msg, const struct talk *t)
{
	_cleanup_(nl_socket_freep) struct nl_sock *own = NULL;
	struct nl_sock *sk = NULL;
	bool done = false;
	int r;

	r = ns ? net_ns_socket(ns, protocol, &sk) : nlsock_open(protocol, &own);
	if (r < 0)
		return r;
	r = nlsock_exchange(ns ? sk : own, msg, t->cb, t->obj_cb, t->data, &done);
	if (r < 0 && ns && !done)
		net_ns_socket_drop(ns, protocol);
	return r;
}

static int talk_retry(struct net_ns *ns, int protocol, struct nl_msg *msg,
		      const struct talk *proto, void (*reset)(void *data))
{
	bool dump = nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP;
	int r = -EAGAIN;

	net_ack_clear();
	for (int i = 0; i < NLSOCK_DUMP_TRIES; i++) {
		if (i > 0 && reset)
			reset(proto->data);
		r = talk_once(ns, protocol, msg, proto);
		if (r != -EINTR || !dump)
			return r;
		r = -EAGAIN;
	}
	return r;
}

int nlsock_talk(struct net_ns *ns, int protocol, struct nl_msg *msg, nlsock_msg_cb cb,
		void (*reset)(void *data), void *data)
{
	struct talk t = { .cb = cb, .data = data };

	return talk_retry(ns, protocol, msg, &t, reset);
}

int nlsock_request(struct net_ns *ns, struct nl_msg *msg)
{
	return nlsock_talk(ns, NETLINK_ROUTE, msg, NULL, NULL, NULL);
}

int nlsock_query(struct net_ns *ns, struct nl_msg *msg, nlsock_obj_cb cb, void (*reset)(void *data),
		 void *data)
{
	struct talk t = { .obj_cb = cb, .data = data };

	return talk_retry(ns, NETLINK_ROUTE, msg, &t, reset);
}
