/* Netlink plumbing of common/net: libnl-3 messages and sockets, the kernel's errno and ack text */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "common/util/cleanup.h"

struct ip_addr;
struct nl_addr;
struct nl_object;
struct nl_sock;

DEFINE_CLEANUP_FUNC(nlmsg_freep, struct nl_msg *, nlmsg_free);
DEFINE_CLEANUP_FUNC(nl_socket_freep, struct nl_sock *, nl_socket_free);

/* The receive buffer: the largest message the kernel builds for a reader (a dump's). */
#define NLSOCK_RECV_SIZE 32768

/* Attempts at a dump the kernel reports as interrupted (NLM_F_DUMP_INTR). */
#define NLSOCK_DUMP_TRIES 5

/*
 * Called for every reply message that is not a control message. Return 0 to
 * go on, a negative errno to stop the request with it.
 */
typedef int (*nlsock_msg_cb)(const struct nlmsghdr *nlh, void *data);

/*
 * Called for every object libnl parses from a reply, with the raw message it
 * came from for attributes libnl does not model. Return 0 to go on, a negative
 * errno to stop the query with it.
 */
typedef int (*nlsock_obj_cb)(struct nl_object *obj, const struct nlmsghdr *nlh, void *data);

/**
 * nlsock_msg_new() - start a request: netlink header and family header
 * @type: message type (RTM_NEWLINK, an RDMA netlink operation, ...)
 * @flags: NLM_F_* flags; NLM_F_REQUEST and NLM_F_ACK are added
 * @hdr: family header (ifinfomsg, ...) to copy after the netlink header, NULL for none
 * @hdr_len: size of @hdr
 * @ret: message, written only on success; release with nlmsg_free()
 *
 * The buffer is zeroed and attribute padding is cleared by libnl, so no stack
 * or heap bytes go to the kernel. Sequence number and port are left 0 until
 * the message is sent.
 *
 * Return: 0 on success, -ENOMEM.
 */
int nlsock_msg_new(uint16_t type, uint16_t flags, const void *hdr, size_t hdr_len,
		   struct nl_msg **ret);

/**
 * nlsock_open() - a connected libnl socket that asks for extended acks and reads each
 *                 reply once, in the caller's netns
 * @protocol: netlink family (NETLINK_ROUTE, NETLINK_RDMA)
 * @ret: socket, written only on success; release with nl_socket_free()
 *
 * Return: 0 on success, negative errno on failure.
 */
int nlsock_open(int protocol, struct nl_sock **ret);

/**
 * nlsock_exchange() - one request on a given socket, and its replies up to the kernel's
 *                     ack, NLMSG_DONE or an error
 * @sk: socket from nlsock_open()
 * @msg: request (not consumed; numbered afresh for @sk)
 * @cb: called for every reply message that is not a control message, may be NULL
 * @obj_cb: called for every libnl object parsed from a reply, may be NULL
 * @data: passed to the callbacks
 * @ret_done: whether the kernel's last word arrived (false: what is left unread on
 *            @sk must not answer another request)
 *
 * Return: 0 on success, the kernel's negative errno, -EINTR for an interrupted dump,
 * or the negative errno a callback returned.
 */
int nlsock_exchange(struct nl_sock *sk, struct nl_msg *msg, nlsock_msg_cb cb, nlsock_obj_cb obj_cb,
		    void *data, bool *ret_done);

/**
 * nlsock_batch() - send messages in one write, as netfilter's batches must go, and
 *                  read the kernel's answer to each
 * @sk: socket from nlsock_open()
 * @msgs: the messages in order (numbered afresh for @sk); each that carries NLM_F_ACK
 *        must be answered
 * @n: their number
 * @ret_failed: the index of the message the kernel's first refusal answers (netfilter
 *              answers a failed commit on the batch's opening message), @n for none
 *
 * The kernel handles a write to its netlink socket before the write returns, so its
 * answers are all queued then: they are read without waiting, and an answer missing
 * is an error, never a wait. The text of the first refusal is kept for net_err_set().
 *
 * Return: 0 when every message was answered without error, the kernel's first negative
 * errno, -EPROTO for a missing answer, negative errno otherwise.
 */
int nlsock_batch(struct nl_sock *sk, struct nl_msg *const *msgs, size_t n, size_t *ret_failed);

/**
 * nlsock_nle_errno() - translate a libnl error code to a negative errno
 * @nle: NLE_* code, either sign
 *
 * Return: negative errno (-EIO for codes without a better match), 0 for 0.
 */
int nlsock_nle_errno(int nle);

/**
 * nlsock_ip_from_addr() - an nl_addr of one family as an ip_addr
 * @a: libnl address, may be NULL
 * @family: AF_INET or AF_INET6
 * @ret: address, written only on success
 *
 * A default route's destination comes with no bytes at all: that is the
 * family's zero address.
 *
 * Return: true when @a is an address of @family.
 */
bool nlsock_ip_from_addr(const struct nl_addr *a, int family, struct ip_addr *ret);

/**
 * nlsock_grow() - room for one more entry in an array a dump fills
 * @v: the array (realloc'ed)
 * @cap: its capacity in entries (updated)
 * @n: entries in use
 * @size: size of an entry
 *
 * Return: 0 on success, -ENOMEM.
 */
int nlsock_grow(void **v, size_t *cap, size_t n, size_t size);
