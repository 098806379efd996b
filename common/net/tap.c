/* Tap devices: made through /dev/net/tun in a pod's netns, kept by a descriptor until persistent */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/neterr.h"
#include "common/net/nlsock-ns.h"
#include "common/net/nlsock.h"
#include "common/net/ns.h"
#include "common/net/tap.h"
#include "common/util/cleanup.h"

/* The device's path is the node's, never a config's. */
#define TUN_PATH "/dev/net/tun"

struct tap_open {
	const struct net_tap *tap;
	int fd;
};

/*
 * A tun device belongs to the netns its descriptor was opened in, whatever
 * netns the ioctls come from: the open and TUNSETIFF run in the pod.
 */
static int tap_open_here(void *userdata)
{
	struct tap_open *o = userdata;
	_cleanup_close_ int fd = -1;
	struct ifreq ifr = { 0 };

	fd = open(TUN_PATH, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	/*
	 * What `ip tuntap add mode tap` asks for. IFF_TUN_EXCL: an existing tap of
	 * that name is refused instead of attached to.
	 */
	ifr.ifr_flags = (short)(IFF_TAP | IFF_NO_PI | IFF_TUN_EXCL |
				(o->tap->multi_queue ? IFF_MULTI_QUEUE : 0));
	memcpy(ifr.ifr_name, o->tap->name, strlen(o->tap->name));
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		return errno == EBUSY ? -EEXIST : -errno;
	o->fd = TAKE_FD(fd);
	return 0;
}

int net_tap_create(struct net_ns *ns, const struct net_tap *tap, int *ret_fd)
{
	struct tap_open o = { .tap = tap, .fd = -1 };
	_cleanup_close_ int fd = -1;
	int r;

	net_ack_clear();
	if (!tap || !tap->name || !*tap->name || strlen(tap->name) >= IFNAMSIZ)
		return -EINVAL;
	r = net_ns_run(ns, tap_open_here, &o);
	if (r < 0)
		return r;
	fd = o.fd;
	if (tap->owner != NET_TAP_NOBODY && ioctl(fd, TUNSETOWNER, (unsigned long)tap->owner) < 0)
		return -errno;
	if (tap->group != NET_TAP_NOBODY && ioctl(fd, TUNSETGROUP, (unsigned long)tap->group) < 0)
		return -errno;
	if (tap->hwaddr) {
		struct ifreq ifr = { .ifr_hwaddr = { .sa_family = ARPHRD_ETHER } };

		memcpy(ifr.ifr_hwaddr.sa_data, tap->hwaddr, 6);
		if (ioctl(fd, SIOCSIFHWADDR, &ifr) < 0)
			return -errno;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

int net_tap_persist(int fd)
{
	return ioctl(fd, TUNSETPERSIST, 1UL) < 0 ? -errno : 0;
}

int net_tap_set_bridge(struct net_ns *ns, int ifindex, int master_ifindex)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
	_cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
	int r;

	net_ack_clear();
	if (ifindex <= 0 || master_ifindex <= 0)
		return -EINVAL;
	r = nlsock_msg_new(RTM_NEWLINK, 0, &ifi, sizeof(ifi), &msg);
	if (r < 0)
		return r;
	if (nla_put_u32(msg, IFLA_MASTER, (uint32_t)master_ifindex) < 0)
		return -EMSGSIZE;
	return nlsock_request(ns, msg);
}
