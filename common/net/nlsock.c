/* Netlink plumbing shared by common/net: libmnl requests with extended ack, libnl reads */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/object.h>
#include <netlink/socket.h>

#include "common/cni/error.h"
#include "common/net/link.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

DEFINE_CLEANUP_FUNC(mnl_socket_closep, struct mnl_socket *, mnl_socket_close)
DEFINE_CLEANUP_FUNC(nl_socket_freep, struct nl_sock *, nl_socket_free)

/*
 * The kernel's text for the last failed request. The process is
 * single-threaded and the contract of net_ack_last() is "valid until the next
 * request", so one static buffer is enough.
 */
static char ack_text[1024];

const char *net_ack_last(void)
{
	return ack_text;
}

int net_err_set(struct cni_err *err, int code, int r, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	if (!err || err->code != CNI_OK)
		return r;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cni_err_set(err, code, r, "%s", msg);
	if (ack_text[0])
		cni_err_details(err, "%s", ack_text);
	return r;
}

void nlsock_ack_clear(void)
{
	ack_text[0] = '\0';
}

struct nlmsghdr *nlsock_msg_init(void *buf, size_t size, uint16_t type, uint16_t flags,
				 const void *hdr, size_t hdr_len)
{
	struct nlmsghdr *nlh;

	if (size < MNL_NLMSG_HDRLEN + MNL_ALIGN(hdr_len))
		return NULL;
	/* libmnl does not clear attribute padding: no stack bytes go to the kernel. */
	memset(buf, 0, size);
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	if (hdr_len) {
		void *extra = mnl_nlmsg_put_extra_header(nlh, hdr_len);

		if (hdr)
			memcpy(extra, hdr, hdr_len);
	}
	return nlh;
}

/* Keeps NLMSGERR_ATTR_MSG of an error message, when the kernel sent one. */
static void ack_record(const struct nlmsghdr *nlh, const struct nlmsgerr *e)
{
	const struct nlattr *attr;
	size_t off = sizeof(*e);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Without NLM_F_CAPPED the request's payload is echoed before the TLVs. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < sizeof(struct nlmsghdr))
			return;
		off += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
	}
	off = MNL_ALIGN(off);
	if (off >= mnl_nlmsg_get_payload_len(nlh))
		return;
	mnl_attr_for_each(attr, nlh, off) {
		if (mnl_attr_get_type(attr) != NLMSGERR_ATTR_MSG)
			continue;
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
			return;
		snprintf(ack_text, sizeof(ack_text), "%s", mnl_attr_get_str(attr));
		return;
	}
}

static int cb_error(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

	(void)data;
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (e->error == 0)
		return MNL_CB_STOP; /* the ack */
	ack_record(nlh, e);
	errno = e->error < 0 ? -e->error : e->error;
	return MNL_CB_ERROR;
}

/* The caller's callback, behind a check for an interrupted dump. */
struct talk_data {
	mnl_cb_t cb;
	void *data;
};

static int dump_interrupted(const struct nlmsghdr *nlh)
{
	if (!(nlh->nlmsg_flags & NLM_F_DUMP_INTR))
		return 0;
	errno = EINTR;
	return 1;
}

static int cb_data(const struct nlmsghdr *nlh, void *data)
{
	struct talk_data *t = data;

	if (dump_interrupted(nlh))
		return MNL_CB_ERROR;
	return t->cb ? t->cb(nlh, t->data) : MNL_CB_OK;
}

static int cb_done(const struct nlmsghdr *nlh, void *data)
{
	(void)data;
	if (dump_interrupted(nlh))
		return MNL_CB_ERROR;
	/* A dump that failed half-way ends with its error in NLMSG_DONE. */
	if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(int)) {
		int e;

		memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
		if (e < 0) {
			errno = -e;
			return MNL_CB_ERROR;
		}
	}
	return MNL_CB_STOP;
}

static int cb_noop(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static int cb_overrun(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	errno = ENOSPC;
	return MNL_CB_ERROR;
}

static int mnl_open(int bus, struct mnl_socket **ret)
{
	_cleanup_(mnl_socket_closep) struct mnl_socket *nl = NULL;
	int one = 1;

	nl = mnl_socket_open2(bus, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	/* Old kernels lack these options; the request still works without them. */
	(void)mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	(void)mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	*ret = TAKE_PTR(nl);
	return 0;
}

/* One send and the replies up to the ack, NLMSG_DONE or an error. */
static int talk_once(int bus, struct nlmsghdr *nlh, mnl_cb_t cb, void *data, char *buf)
{
	mnl_cb_t ctl[NLMSG_MIN_TYPE] = {
		[NLMSG_NOOP] = cb_noop,
		[NLMSG_ERROR] = cb_error,
		[NLMSG_DONE] = cb_done,
		[NLMSG_OVERRUN] = cb_overrun,
	};
	_cleanup_(mnl_socket_closep) struct mnl_socket *nl = NULL;
	struct talk_data t = { .cb = cb, .data = data };
	unsigned int portid;
	int r;

	r = mnl_open(bus, &nl);
	if (r < 0)
		return r;
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_seq = (uint32_t)time(NULL);
	nlh->nlmsg_pid = 0;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, NLSOCK_RECV_SIZE);

		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		/* An interrupted dump comes back as EINTR; errno is set only on MNL_CB_ERROR. */
		r = mnl_cb_run2(buf, (size_t)n, nlh->nlmsg_seq, portid, cb_data, &t, ctl,
				ARRAY_SIZE(ctl));
		if (r == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
		if (r == MNL_CB_STOP)
			return 0;
	}
}

int nlsock_talk(int bus, struct nlmsghdr *nlh, mnl_cb_t cb, void (*reset)(void *data),
		void *data)
{
	_cleanup_free_ char *buf = NULL;
	int r = -EAGAIN;

	nlsock_ack_clear();
	buf = malloc(NLSOCK_RECV_SIZE);
	if (!buf)
		return -ENOMEM;
	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	for (int i = 0; i < NLSOCK_DUMP_TRIES; i++) {
		if (i > 0 && reset)
			reset(data);
		errno = 0;
		r = talk_once(bus, nlh, cb, data, buf);
		if (r != -EINTR || !(nlh->nlmsg_flags & NLM_F_DUMP))
			return r;
		r = -EAGAIN;
	}
	return r;
}

int nlsock_rtnl_request(struct nlmsghdr *nlh)
{
	return nlsock_talk(NETLINK_ROUTE, nlh, NULL, NULL, NULL);
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

int nlsock_nl_open(struct nl_sock **ret)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	int r;

	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0)
		return nlsock_nle_errno(r);
	*ret = TAKE_PTR(sk);
	return 0;
}

struct query {
	nlsock_obj_cb cb;
	void *data;
	const struct nlmsghdr *nlh; /* message being parsed */
	int r;                      /* first failure: -errno */
	int kernel_errno;           /* the kernel's error, before libnl maps it */
};

static void query_parsed(struct nl_object *obj, void *arg)
{
	struct query *q = arg;

	if (q->r == 0)
		q->r = q->cb(obj, q->nlh, q->data);
}

static int query_valid(struct nl_msg *msg, void *arg)
{
	struct query *q = arg;
	int r;

	q->nlh = nlmsg_hdr(msg);
	r = nl_msg_parse(msg, query_parsed, q);
	/* A message type libnl has no parser for carries nothing we want. */
	if (r < 0 && r != -NLE_MSGTYPE_NOSUPPORT && q->r == 0)
		q->r = nlsock_nle_errno(r);
	return q->r < 0 ? NL_STOP : NL_OK;
}

static int query_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct query *q = arg;

	(void)nla;
	q->kernel_errno = e->error < 0 ? e->error : -e->error;
	return NL_STOP;
}

static int query_once(struct nl_msg *msg, struct query *q)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	int r;

	r = nlsock_nl_open(&sk);
	if (r < 0)
		return r;
	r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, query_valid, q);
	if (r >= 0)
		r = nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, query_error, q);
	if (r < 0)
		return nlsock_nle_errno(r);
	/* A retry goes out on a new socket: let libnl number it again. */
	nlmsg_hdr(msg)->nlmsg_seq = NL_AUTO_SEQ;
	nlmsg_hdr(msg)->nlmsg_pid = NL_AUTO_PORT;
	r = nl_send_auto(sk, msg);
	if (r < 0)
		return nlsock_nle_errno(r);
	r = nl_recvmsgs_default(sk);
	if (q->r < 0)
		return q->r;
	if (q->kernel_errno < 0)
		return q->kernel_errno;
	if (r == -NLE_DUMP_INTR)
		return -EINTR;
	if (r < 0)
		return nlsock_nle_errno(r);
	return 0;
}

int nlsock_nl_query(struct nl_msg *msg, nlsock_obj_cb cb, void (*reset)(void *data), void *data)
{
	bool dump = nlmsg_hdr(msg)->nlmsg_flags & NLM_F_DUMP;
	int r = -EAGAIN;

	nlsock_ack_clear();
	for (int i = 0; i < NLSOCK_DUMP_TRIES; i++) {
		struct query q = { .cb = cb, .data = data };

		if (i > 0 && reset)
			reset(data);
		r = query_once(msg, &q);
		if (r != -EINTR || !dump)
			return r;
		r = -EAGAIN;
	}
	return r;
}
