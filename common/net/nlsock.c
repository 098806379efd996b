/* Netlink plumbing of common/net: libnl-3 messages and sockets, the kernel's errno and ack text */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/addr.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/object.h>
#include <netlink/socket.h>

#include "common/net/neterr.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"
#include "common/util/ipaddr.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

DEFINE_CLEANUP_FUNC(nl_cb_putp, struct nl_cb *, nl_cb_put);

int nlsock_msg_new(uint16_t type, uint16_t flags, const void *hdr, size_t hdr_len,
		   struct nl_msg **ret)
{
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;

	msg = nlmsg_alloc_simple(type, NLM_F_REQUEST | NLM_F_ACK | flags);
	if (!msg)
		return -ENOMEM;
	if (hdr_len) {
		void *extra = nlmsg_reserve(msg, hdr_len, NLMSG_ALIGNTO);

		if (!extra)
			return -ENOMEM;
		if (hdr)
			memcpy(extra, hdr, hdr_len);
	}
	*ret = TAKE_PTR(msg);
	return 0;
}

/* One request: what the callbacks found. */
struct talk {
	nlsock_msg_cb cb;
	nlsock_obj_cb obj_cb;
	void *data;
	const struct nlmsghdr *nlh; /* message being parsed into objects */
	int r;                      /* first failure: -errno */
	bool done;                  /* the ack, NLMSG_DONE or an error arrived */
};

/* Keeps NLMSGERR_ATTR_MSG of an error message, when the kernel sent one. */
static void ack_record(const struct nlmsgerr *e)
{
	const struct nlmsghdr *nlh = (const void *)((const char *)e - NLMSG_HDRLEN);
	size_t off = sizeof(*e), len = (size_t)nlmsg_datalen(nlh);
	struct nlattr *a;
	void *tlvs;
	int rem;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Without NLM_F_CAPPED the request's payload is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(struct nlmsghdr))
			return;
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	off = NLMSG_ALIGN(off);
	if (off >= len)
		return;
	/* The offset is NLMSG_ALIGN'ed: the attributes start aligned. */
	tlvs = (char *)nlmsg_data(nlh) + off;
	nla_for_each_attr(a, tlvs, (int)(len - off), rem) {
		if (nla_type(a) != NLMSGERR_ATTR_MSG)
			continue;
		if (nla_len(a) > 0 && memchr(nla_data(a), '\0', (size_t)nla_len(a)))
			net_ack_set(nla_data(a));
		return;
	}
}

static int talk_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct talk *t = arg;

	(void)nla;
	ack_record(e);
	if (t->r == 0)
		t->r = e->error < 0 ? e->error : -e->error;
	t->done = true;
	return NL_STOP;
}

static int talk_ack(struct nl_msg *msg, void *arg)
{
	struct talk *t = arg;

	(void)msg;
	t->done = true;
	return NL_STOP;
}

static int talk_finish(struct nl_msg *msg, void *arg)
{
	struct talk *t = arg;
	const struct nlmsghdr *nlh = nlmsg_hdr(msg);

	t->done = true;
	/* A dump that failed half-way ends with its error in NLMSG_DONE. */
	if (nlmsg_datalen(nlh) >= (int)sizeof(int)) {
		int e;

		memcpy(&e, nlmsg_data(nlh), sizeof(e));
		if (e < 0 && t->r == 0)
			t->r = e;
	}
	return NL_STOP;
}

static int talk_interrupted(struct nl_msg *msg, void *arg)
{
	struct talk *t = arg;

	(void)msg;
	if (t->r == 0)
		t->r = -EINTR;
	return NL_STOP;
}

static int talk_overrun(struct nl_msg *msg, void *arg)
{
	struct talk *t = arg;

	(void)msg;
	if (t->r == 0)
		t->r = -ENOSPC;
	return NL_STOP;
}

static void talk_parsed(struct nl_object *obj, void *arg)
{
	struct talk *t = arg;

	if (t->r == 0)
		t->r = t->obj_cb(obj, t->nlh, t->data);
}

static int talk_valid(struct nl_msg *msg, void *arg)
{
	struct talk *t = arg;
	int r;

	if (t->obj_cb) {
		t->nlh = nlmsg_hdr(msg);
		r = nl_msg_parse(msg, talk_parsed, t);
		/* A message type libnl has no parser for carries nothing we want. */
		if (r < 0 && r != -NLE_MSGTYPE_NOSUPPORT && t->r == 0)
			t->r = nlsock_nle_errno(r);
	} else if (t->cb) {
		r = t->cb(nlmsg_hdr(msg), t->data);
		if (r < 0 && t->r == 0)
			t->r = r;
	}
	return t->r < 0 ? NL_STOP : NL_OK;
}

static int talk_callbacks(struct talk *t, struct nl_cb **ret)
{
	_cleanup_(nl_cb_putp) struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	static const struct {
		enum nl_cb_type type;
		nl_recvmsg_msg_cb_t fn;
	} set[] = {
		{ NL_CB_VALID, talk_valid },       { NL_CB_ACK, talk_ack },
		{ NL_CB_FINISH, talk_finish },     { NL_CB_DUMP_INTR, talk_interrupted },
		{ NL_CB_OVERRUN, talk_overrun },
	};

	if (!cb)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(set); i++)
		if (nl_cb_set(cb, set[i].type, NL_CB_CUSTOM, set[i].fn, t) < 0)
			return -EINVAL;
	if (nl_cb_err(cb, NL_CB_CUSTOM, talk_error, t) < 0)
		return -EINVAL;
	*ret = TAKE_PTR(cb);
	return 0;
}

int nlsock_open(int protocol, struct nl_sock **ret)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	int one = 1, fd, r;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	r = nl_connect(sk, protocol);
	if (r < 0)
		return nlsock_nle_errno(r);
	/*
	 * Every reply read once, into a buffer as large as the kernel makes a
	 * message (it sizes a dump's to the reader's buffer, 32 KiB at most),
	 * instead of peeked at for its size first. One that does not fit is an
	 * error (libnl's NLE_MSG_TRUNC), never a cut message.
	 */
	r = nl_socket_set_msg_buf_size(sk, NLSOCK_RECV_SIZE);
	if (r < 0)
		return nlsock_nle_errno(r);
	nl_socket_disable_msg_peek(sk);
	fd = nl_socket_get_fd(sk);
	/* Old kernels lack these options; the request still works without them. */
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	*ret = TAKE_PTR(sk);
	return 0;
}

static int talk_on(struct nl_sock *sk, struct nl_msg *msg, struct talk *t)
{
	_cleanup_(nl_cb_putp) struct nl_cb *cb = NULL;
	int r;

	r = talk_callbacks(t, &cb);
	if (r < 0)
		return r;
	/* Every request, a retry too, is numbered by libnl for the socket it goes out on. */
	nlmsg_hdr(msg)->nlmsg_seq = NL_AUTO_SEQ;
	nlmsg_hdr(msg)->nlmsg_pid = NL_AUTO_PORT;
	r = nl_send_auto(sk, msg);
	if (r < 0)
		return nlsock_nle_errno(r);
	/* A GET's reply and its ack arrive in two reads; a dump in as many as it takes. */
	while (!t->done) {
		r = nl_recvmsgs_report(sk, cb);
		if (t->r < 0)
			return t->r;
		if (r < 0)
			return nlsock_nle_errno(r);
		if (r == 0)
			return -EPIPE;
	}
	return 0;
}

int nlsock_exchange(struct nl_sock *sk, struct nl_msg *msg, nlsock_msg_cb cb, nlsock_obj_cb obj_cb,
		    void *data, bool *ret_done)
{
	struct talk t = { .cb = cb, .obj_cb = obj_cb, .data = data };
	int r = talk_on(sk, msg, &t);

	*ret_done = t.done;
	return r;
}

/* The answers to a batch: one per message that asked for one, the first error. */
struct batch_answers {
	struct nl_msg *const *msgs;
	size_t n, answered, failed;
	int r;
};

static void batch_answer(struct batch_answers *a, const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *e;
	size_t i;

	if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return;
	e = NLMSG_DATA(nlh);
	for (i = 0; i < a->n && nlmsg_hdr(a->msgs[i])->nlmsg_seq != nlh->nlmsg_seq; i++)
		;
	if (i < a->n && (nlmsg_hdr(a->msgs[i])->nlmsg_flags & NLM_F_ACK))
		a->answered++;
	if (e->error == 0 || a->r < 0)
		return;
	ack_record(e);
	a->r = e->error < 0 ? e->error : -e->error;
	a->failed = i;
}

/* Socket buffers: libnl's size of them, an answer's room in one, and what else they hold. */
#define NLSOCK_BATCH_DEFAULT_BUF 32768u
#define NLSOCK_BATCH_ANSWER 1024u
#define NLSOCK_BATCH_SLACK 16384u

int nlsock_batch(struct nl_sock *sk, struct nl_msg *const *msgs, size_t n, size_t *ret_failed)
{
	struct batch_answers a = { .msgs = msgs, .n = n, .failed = n };
	_cleanup_free_ unsigned char *buf = NULL;
	size_t len = 0, want = 0;
	int r;

	*ret_failed = n;
	for (size_t i = 0; i < n; i++)
		len += nlmsg_hdr(msgs[i])->nlmsg_len;
	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	len = 0;
	for (size_t i = 0; i < n; i++) {
		struct nlmsghdr *nlh = nlmsg_hdr(msgs[i]);

		nlh->nlmsg_seq = nl_socket_use_seq(sk);
		nlh->nlmsg_pid = 0;
		want += (nlh->nlmsg_flags & NLM_F_ACK) != 0;
		memcpy(buf + len, nlh, nlh->nlmsg_len);
		len += nlh->nlmsg_len;
	}
	/*
	 * The kernel refuses a write larger than the socket's send buffer and drops the
	 * answers past its receive buffer (libnl asks for 32 KiB of each: about 40
	 * answers, each counted at its buffer's size): a batch of hundreds of changes
	 * (portmap's mappings) gets buffers its size.
	 */
	if (len + NLSOCK_BATCH_SLACK > NLSOCK_BATCH_DEFAULT_BUF ||
	    want * NLSOCK_BATCH_ANSWER + NLSOCK_BATCH_SLACK > NLSOCK_BATCH_DEFAULT_BUF) {
		int fd = nl_socket_get_fd(sk), snd, rcv;

		if (len > INT32_MAX / 2 || want > INT32_MAX / (2 * NLSOCK_BATCH_ANSWER))
			return -E2BIG;
		snd = (int)(len + NLSOCK_BATCH_SLACK);
		rcv = (int)(want * NLSOCK_BATCH_ANSWER + NLSOCK_BATCH_SLACK);
		/* Past the node's wmem_max and rmem_max only with CAP_NET_ADMIN, which plugins have. */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd)) < 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	}
	r = nl_sendto(sk, buf, len);
	if (r < 0)
		return nlsock_nle_errno(r);
	r = nl_socket_set_nonblocking(sk);
	if (r < 0)
		return nlsock_nle_errno(r);
	for (;;) {
		_cleanup_free_ unsigned char *in = NULL;
		struct sockaddr_nl peer;
		struct nlmsghdr *nlh;
		int got = nl_recv(sk, &peer, &in, NULL);

		if (got == -NLE_AGAIN || got == 0)
			break;
		if (got < 0)
			return nlsock_nle_errno(got);
		nlh = (struct nlmsghdr *)(void *)in;
		for (int rem = got; nlmsg_ok(nlh, rem); nlh = nlmsg_next(nlh, &rem))
			batch_answer(&a, nlh);
	}
	*ret_failed = a.failed;
	if (a.r < 0)
		return a.r;
	return a.answered == want ? 0 : -EPROTO;
}

bool nlsock_ip_from_addr(const struct nl_addr *a, int family, struct ip_addr *ret)
{
	struct ip_addr ip = { .family = family };
	size_t n;

	if (!a || nl_addr_get_family(a) != family)
		return false;
	n = ip_addr_size(&ip);
	if (nl_addr_get_len(a) != 0 && nl_addr_get_len(a) != n)
		return false;
	memcpy(ip.bytes, nl_addr_get_binary_addr(a), nl_addr_get_len(a));
	*ret = ip;
	return true;
}

int nlsock_nle_errno(int nle)
{
	if (nle < 0)
		nle = -nle;
	switch (nle) {
	case NLE_SUCCESS:
		return 0;
	case NLE_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	case NLE_AGAIN:
	case NLE_DUMP_INTR:
		return -EAGAIN;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_EXIST:
		return -EEXIST;
	case NLE_INVAL:
	case NLE_MISSING_ATTR:
	case NLE_AF_MISMATCH:
	case NLE_OBJ_MISMATCH:
	case NLE_ATTRSIZE:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
	case NLE_MSG_OVERFLOW:
	case NLE_MSG_TRUNC:
	case NLE_MSG_TOOSHORT:
		return -EMSGSIZE;
	case NLE_OPNOTSUPP:
	case NLE_SRCRT_NOSUPPORT:
	case NLE_MSGTYPE_NOSUPPORT:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:
	case NLE_NODEV:
		return -ENODEV;
	case NLE_NOATTR:
		return -ENODATA;
	case NLE_SEQ_MISMATCH:
		return -EPROTO;
	case NLE_NOADDR:
		return -EADDRNOTAVAIL;
	case NLE_NOCACHE:
		return -ENOENT;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_PERM:
		return -EPERM;
	case NLE_PKTLOC_FILE:
	case NLE_PARSE_ERR:
	case NLE_IMMUTABLE:
	case NLE_FAILURE:
	default:
		return -EIO;
	}
}

int nlsock_grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	p = reallocarray(*v, c, size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}
