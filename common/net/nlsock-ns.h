/* Netlink requests in a handle's netns (or the caller's) */
#pragma once

#include "common/net/nlsock.h"

struct net_ns;

/**
 * nlsock_talk() - send one request and read the replies up to the ack
 * @ns: the netns to talk to (its handle's socket), NULL for the caller's (a new socket)
 * @protocol: netlink family (NETLINK_ROUTE, NETLINK_RDMA)
 * @msg: request (not consumed)
 * @cb: called for every reply message that is not a control message, may be NULL
 * @reset: called before a dump that the kernel interrupted is retried, may be NULL
 * @data: passed to @cb and @reset
 *
 * The socket asks for extended acks; a failure's text is kept for
 * net_err_set(), which is cleared first. Dumps interrupted by a concurrent
 * change (NLM_F_DUMP_INTR) are retried NLSOCK_DUMP_TRIES times in all.
 *
 * Return: 0 on success, the kernel's negative errno, -EAGAIN when every dump
 * attempt was interrupted, or the negative errno @cb returned.
 */
int nlsock_talk(struct net_ns *ns, int protocol, struct nl_msg *msg, nlsock_msg_cb cb,
		void (*reset)(void *data), void *data);

/**
 * nlsock_request() - nlsock_talk() for an rtnetlink change without replies
 * @ns: the netns, NULL for the caller's
 * @msg: request (not consumed)
 *
 * Return: 0 on success, negative errno on failure.
 */
int nlsock_request(struct net_ns *ns, struct nl_msg *msg);

/**
 * nlsock_query() - send an rtnetlink GET and parse the replies into libnl objects
 * @ns: the netns, NULL for the caller's
 * @msg: request (not consumed); a dump when it carries NLM_F_DUMP
 * @cb: called for every parsed object
 * @reset: called before an interrupted dump is retried, may be NULL
 * @data: passed to @cb and @reset
 *
 * As nlsock_talk(); reply types libnl has no parser for are skipped.
 *
 * Return: 0 on success, negative errno on failure (-EAGAIN when every dump
 * attempt was interrupted).
 */
int nlsock_query(struct net_ns *ns, struct nl_msg *msg, nlsock_obj_cb cb,
		 void (*reset)(void *data), void *data);
