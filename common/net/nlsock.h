/* Netlink plumbing shared by common/net: libmnl requests with extended ack, libnl reads */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

struct net_child;
struct nl_msg;
struct nl_object;
struct nl_sock;

/*
 * Size of a request buffer. Every change request of common/net is far below
 * it; MNL_SOCKET_BUFFER_SIZE is not a constant expression, so it cannot size
 * an array without making it a VLA.
 */
#define NLSOCK_REQ_SIZE 8192

/*
 * Receive buffer: a dump message from the kernel can be up to 32 KiB when the
 * reader offers that much; a smaller buffer would truncate it.
 */
#define NLSOCK_RECV_SIZE 32768

/* Attempts at a dump the kernel reports as interrupted (NLM_F_DUMP_INTR). */
#define NLSOCK_DUMP_TRIES 5

/* A request buffer aligned for struct nlmsghdr. */
struct nlsock_buf {
	union {
		char data[NLSOCK_REQ_SIZE];
		struct nlmsghdr align_;
	};
};

/**
 * nlsock_msg_init() - start a netlink message in a buffer
 * @buf: buffer aligned for struct nlmsghdr (e.g. struct nlsock_buf)
 * @size: size of @buf
 * @type: message type (RTM_NEWLINK, ...)
 * @flags: NLM_F_* flags; NLM_F_REQUEST is added
 * @hdr: family header to copy after the netlink header (ifinfomsg, ...), may be NULL
 * @hdr_len: size of @hdr
 *
 * Return: the message header, NULL when @buf is too small.
 */
struct nlmsghdr *nlsock_msg_init(void *buf, size_t size, uint16_t type, uint16_t flags,
				 const void *hdr, size_t hdr_len);

/**
 * nlsock_talk() - send one request on a new libmnl socket and read the replies
 * @bus: netlink family (NETLINK_ROUTE, NETLINK_RDMA)
 * @nlh: request; NLM_F_ACK is added, the sequence number is set here
 * @cb: called for every reply message that is not a control message, may be NULL
 * @reset: called before a dump that the kernel interrupted is retried, may be NULL
 * @data: passed to @cb and @reset
 *
 * The socket asks for extended acks; a failure's text is kept for net_ack_last(),
 * which is cleared first. Dumps interrupted by a concurrent change
 * (NLM_F_DUMP_INTR) are retried NLSOCK_DUMP_TRIES times in all.
 *
 * Return: 0 on success, the kernel's negative errno, -EAGAIN when every dump
 * attempt was interrupted, or the negative errno @cb stored in errno when it
 * returned MNL_CB_ERROR.
 */
int nlsock_talk(int bus, struct nlmsghdr *nlh, mnl_cb_t cb, void (*reset)(void *data),
		void *data);

/**
 * nlsock_rtnl_request() - nlsock_talk() for an rtnetlink change without replies
 * @nlh: request
 *
 * Return: 0 on success, negative errno on failure.
 */
int nlsock_rtnl_request(struct nlmsghdr *nlh);

/**
 * nlsock_ack_clear() - forget the extended-ack text of an earlier request
 */
void nlsock_ack_clear(void);

/**
 * nlsock_nle_errno() - translate a libnl error code to a negative errno
 * @nle: NLE_* code, either sign
 *
 * Return: negative errno (-EIO for codes without a better match), 0 for 0.
 */
int nlsock_nle_errno(int nle);

/**
 * nlsock_nl_open() - a connected libnl NETLINK_ROUTE socket in the current netns
 * @ret: socket, written only on success; release with nl_socket_free()
 *
 * Return: 0 on success, negative errno on failure.
 */
int nlsock_nl_open(struct nl_sock **ret);

/*
 * Called for every object libnl parses from a reply, with the raw message it
 * came from for attributes libnl does not model. Return 0 to go on, a negative
 * errno to stop the query with it.
 */
typedef int (*nlsock_obj_cb)(struct nl_object *obj, const struct nlmsghdr *nlh, void *data);

/**
 * nlsock_nl_query() - send an rtnetlink GET with libnl and parse the replies into objects
 * @msg: request (not consumed); a dump when it carries NLM_F_DUMP
 * @cb: called for every parsed object
 * @reset: called before an interrupted dump is retried, may be NULL
 * @data: passed to @cb and @reset
 *
 * Kernel errors keep their errno (libnl's own NLE_* codes are translated).
 * Interrupted dumps are retried NLSOCK_DUMP_TRIES times in all.
 *
 * Return: 0 on success, negative errno on failure (-EAGAIN when every dump
 * attempt was interrupted).
 */
int nlsock_nl_query(struct nl_msg *msg, nlsock_obj_cb cb, void (*reset)(void *data), void *data);

/**
 * net_link_build_create() - build the RTM_NEWLINK request net_link_create() sends
 * @child: what to create
 * @buf: output buffer aligned for struct nlmsghdr
 * @size: size of @buf
 *
 * Lets tests compare the request attribute by attribute with a capture of
 * iproute2's without sending it. The sequence number and port are left 0.
 *
 * Return: length of the message at @buf, negative errno on invalid input or
 * -EMSGSIZE when @buf is too small.
 */
int net_link_build_create(const struct net_child *child, void *buf, size_t size);
