/* Waiting for a link of the caller's netns to come up: the kernel's notices, not a poll */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>

#include "common/net/link-internal.h"
#include "common/net/link.h"
#include "common/net/linkwait.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"
#include "common/util/clock.h"

/* Reads what notices have come; 1 when one says the link is up, 0 when none does yet. */
static int read_notices(int fd, int ifindex, struct net_link *ret)
{
	union {
		char data[NLSOCK_RECV_SIZE];
		struct nlmsghdr align_;
	} buf;

	for (;;) {
		ssize_t n = recv(fd, buf.data, sizeof(buf.data), MSG_DONTWAIT);
		struct nlmsghdr *h;
		int left;

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		left = (int)n;
		for (h = &buf.align_; nlmsg_ok(h, left); h = nlmsg_next(h, &left)) {
			const struct ifinfomsg *ifi = NLMSG_DATA(h);
			struct net_link l;

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)) || ifi->ifi_index != ifindex)
				continue;
			if (h->nlmsg_type == RTM_DELLINK)
				return -ENODEV;
			if (h->nlmsg_type != RTM_NEWLINK || net_link_parse(h, h->nlmsg_len, &l) < 0)
				continue;
			*ret = l;
			if (l.operstate == IF_OPER_UP)
				return 1;
		}
	}
}

int net_link_wait_up(int ifindex, int timeout_ms, struct net_link *ret)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * 1000000;
	_cleanup_close_ int fd = -1;
	int r;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	r = net_link_get_by_index(NULL, ifindex, ret);
	if (r < 0 || ret->operstate == IF_OPER_UP)
		return r;
	for (;;) {
		int64_t left = deadline - clock_mono_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((left + 999999) / 1000000));
		if (r < 0 && errno != EINTR)
			return -errno;
		r = read_notices(fd, ifindex, ret);
		/* The notices overflowed the socket: what they said is asked again. */
		if (r == -ENOBUFS)
			r = net_link_get_by_index(NULL, ifindex, ret) < 0 ? -ENODEV :
			    ret->operstate == IF_OPER_UP;
		if (r != 0)
			return r < 0 ? r : 0;
	}
}
