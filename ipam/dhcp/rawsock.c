/* A DHCP client's packet socket on one interface of the current netns */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "ipam/dhcp/packet.h"
#include "ipam/dhcp/rawsock.h"

#define PORT_SERVER 67
#define PORT_CLIENT 68

static int if_ioctl(unsigned long req, struct ifreq *ifr)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	return ioctl(fd, req, ifr) < 0 ? -errno : 0;
}

static int set_up(const char *ifname, bool up)
{
	struct ifreq ifr = { 0 };
	int r;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if ((r = if_ioctl(SIOCGIFFLAGS, &ifr)) < 0)
		return r;
	if (!!(ifr.ifr_flags & IFF_UP) == up)
		return 0;
	ifr.ifr_flags = (short)(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
	return if_ioctl(SIOCSIFFLAGS, &ifr);
}

/*
 * Until the kernel has the link running (linkwatch activates its queue, up to a second
 * after it is set up), what is sent is dropped: the first DISCOVER would be lost. A link
 * without carrier is waited for no longer than RUNNING_WAIT_MS, then tried anyway.
 */
#define RUNNING_WAIT_MS 3000

static void wait_running(const char *ifname)
{
	struct ifreq ifr = { 0 };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	for (int waited = 0; waited < RUNNING_WAIT_MS; waited += 10) {
		if (if_ioctl(SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags & IFF_RUNNING))
			return;
		usleep(10000);
	}
}

int dhcp_sock_open(const char *ifname, struct dhcp_sock *ret)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP) };
	struct ifreq ifr = { 0 };
	int r;

	if (strlen(ifname) >= IF_NAMESIZE)
		return -ENODEV;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if ((r = if_ioctl(SIOCGIFINDEX, &ifr)) < 0)
		return r;
	sll.sll_ifindex = ifr.ifr_ifindex;
	if ((r = if_ioctl(SIOCGIFHWADDR, &ifr)) < 0)
		return r;
	if ((r = set_up(ifname, true)) < 0)
		return r;
	wait_running(ifname);
	/*
	 * No protocol until bind: a socket made with one is hooked at once, and binding it
	 * to the interface unhooks it first, which waits for an RCU grace period (13 ms of
	 * a 15 ms ADD here).
	 */
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return -errno;
	ret->ifindex = sll.sll_ifindex;
	memcpy(ret->mac, ifr.ifr_hwaddr.sa_data, 6);
	ret->fd = TAKE_FD(fd);
	return 0;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)(p[n - 1] << 8);
	return sum;
}

int dhcp_sock_send(const struct dhcp_sock *s, uint32_t src, uint32_t dst, const uint8_t *payload,
		   size_t len)
{
	uint8_t pkt[sizeof(struct iphdr) + sizeof(struct udphdr) + DHCP_MSG_MAX];
	struct iphdr *ip = (struct iphdr *)pkt;
	struct udphdr *udp = (struct udphdr *)(pkt + sizeof(*ip));
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
		.sll_ifindex = s->ifindex,
		.sll_halen = 6,
		.sll_addr = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	size_t total = sizeof(*ip) + sizeof(*udp) + len;
	uint8_t pseudo[12];
	uint32_t sum;

	if (len > DHCP_MSG_MAX)
		return -EMSGSIZE;
	memset(pkt, 0, sizeof(*ip) + sizeof(*udp));
	ip->version = 4;
	ip->ihl = 5;
	ip->tos = IPTOS_LOWDELAY;
	ip->tot_len = htons((uint16_t)total);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = src;
	ip->daddr = dst;
	ip->check = htons(csum_fold(csum_add(0, pkt, sizeof(*ip))));
	udp->source = htons(PORT_CLIENT);
	udp->dest = htons(PORT_SERVER);
	udp->len = htons((uint16_t)(sizeof(*udp) + len));
	memcpy(pkt + sizeof(*ip) + sizeof(*udp), payload, len);
	memcpy(pseudo, &src, 4);
	memcpy(pseudo + 4, &dst, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	memcpy(pseudo + 10, &udp->len, 2);
	sum = csum_add(csum_add(0, pseudo, sizeof(pseudo)), (uint8_t *)udp, sizeof(*udp) + len);
	udp->check = htons(csum_fold(sum));
	if (udp->check == 0)
		udp->check = 0xffff;
	if (sendto(s->fd, pkt, total, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The UDP payload to port 68 in an IPv4 packet, or NULL: every length checked. The
 * headers are copied out: a packet's bytes carry no alignment.
 */
static const uint8_t *udp_payload(const uint8_t *pkt, size_t n, size_t *ret_len)
{
	struct iphdr ip;
	struct udphdr udp;
	size_t ihl, tot, ulen;

	if (n < sizeof(ip))
		return NULL;
	memcpy(&ip, pkt, sizeof(ip));
	if (ip.version != 4 || ip.protocol != IPPROTO_UDP)
		return NULL;
	ihl = (size_t)ip.ihl * 4;
	tot = ntohs(ip.tot_len);
	/* A fragment cannot be read alone; DHCP replies are not fragmented in practice. */
	if (ihl < sizeof(ip) || tot < ihl + sizeof(udp) || tot > n || (ntohs(ip.frag_off) & 0x3fff))
		return NULL;
	memcpy(&udp, pkt + ihl, sizeof(udp));
	ulen = ntohs(udp.len);
	if (ntohs(udp.dest) != PORT_CLIENT || ulen < sizeof(udp) || ihl + ulen > tot)
		return NULL;
	*ret_len = ulen - sizeof(udp);
	return pkt + ihl + sizeof(udp);
}

int dhcp_sock_recv(const struct dhcp_sock *s, int wake_fd, int timeout_ms, uint8_t *buf,
		   size_t size, size_t *ret_len)
{
	uint8_t pkt[sizeof(struct iphdr) + 60 + DHCP_MSG_MAX];
	int64_t end = now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p[2] = { { .fd = s->fd, .events = POLLIN }, { .fd = wake_fd, .events = POLLIN } };
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		int64_t left = end - now_ms();
		const uint8_t *payload;
		size_t plen = 0;
		ssize_t n;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(p, wake_fd >= 0 ? 2 : 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (wake_fd >= 0 && (p[1].revents & POLLIN))
			return -EINTR;
		if (!(p[0].revents & POLLIN))
			continue;
		n = recvfrom(s->fd, pkt, sizeof(pkt), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &fl);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return -errno;
		/* Our own messages go by too; a truncated packet is no reply to read. */
		if (from.sll_pkttype == PACKET_OUTGOING || (size_t)n > sizeof(pkt))
			continue;
		payload = udp_payload(pkt, (size_t)n, &plen);
		if (!payload || plen > size)
			continue;
		memcpy(buf, payload, plen);
		*ret_len = plen;
		return 0;
	}
}

int dhcp_sock_link_exists(const struct dhcp_sock *s)
{
	char name[IF_NAMESIZE];

	if (if_indextoname((unsigned int)s->ifindex, name))
		return 1;
	return errno == ENXIO || errno == ENODEV ? 0 : -errno;
}

int dhcp_sock_link_down(const struct dhcp_sock *s)
{
	char name[IF_NAMESIZE];

	if (!if_indextoname((unsigned int)s->ifindex, name))
		return -errno;
	return set_up(name, false);
}
