/* ethtool queries of a link: its permanent MAC and its bus device */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/net/ethtool.h"
#include "common/net/ns.h"
#include "common/util/cleanup.h"
#include "common/util/hwaddr.h"

/* One SIOCETHTOOL request; the socket's netns is the one asked. */
static int ethtool_request(struct net_ns *ns, const char *ifname, void *cmd)
{
	_cleanup_close_ int own = -1;
	struct ifreq ifr = { 0 };
	int fd, r;

	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	if (ns) {
		r = net_ns_inet_socket(ns, &fd);
		if (r < 0)
			return r;
	} else {
		fd = own = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
	}
	memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
	ifr.ifr_data = cmd;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return -errno;
	return 0;
}

int net_ethtool_perm_hwaddr(struct net_ns *ns, const char *ifname, uint8_t *ret, size_t *ret_len)
{
	/* struct ethtool_perm_addr ends in a flexible array: room for it behind. */
	union {
		struct ethtool_perm_addr hdr;
		uint8_t buf[sizeof(struct ethtool_perm_addr) + HWADDR_MAX];
	} req = { 0 };
	bool zero = true;
	int r;

	req.hdr.cmd = ETHTOOL_GPERMADDR;
	req.hdr.size = HWADDR_MAX;
	r = ethtool_request(ns, ifname, &req);
	if (r < 0)
		return r;
	if (req.hdr.size == 0 || req.hdr.size > HWADDR_MAX)
		return -ENODATA;
	for (size_t i = 0; i < req.hdr.size; i++)
		zero = zero && req.hdr.data[i] == 0;
	if (zero)
		return -ENODATA;
	memcpy(ret, req.hdr.data, req.hdr.size);
	*ret_len = req.hdr.size;
	return 0;
}

int net_ethtool_bus_info(struct net_ns *ns, const char *ifname, char *ret, size_t size)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	int r;

	r = ethtool_request(ns, ifname, &info);
	if (r < 0)
		return r;
	info.bus_info[sizeof(info.bus_info) - 1] = '\0';
	snprintf(ret, size, "%s", info.bus_info);
	return 0;
}
