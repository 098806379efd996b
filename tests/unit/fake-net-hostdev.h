/* Fakes of the common/net calls host-device adds to fake-net: new netns, RDMA netlink, ethtool */
#pragma once

struct net_ns;
struct nl_msg;
struct nlmsghdr;

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/hwaddr.h"
#include "tests/unit/fake-net.h"

struct nlmsghdr;

#define FAKE_RDMA_MAX_DEVS 4

struct fake_rdma_dev {
	bool used;
	uint32_t index;
	char name[32];
	int ns;               /* fake netns the device lives in */
	int ndev_ifindex;     /* the netdev of its port 1, 0 for none */
	bool software;        /* rxe, siw: unregistered when its netdev leaves @ns */
};

/*
 * An RDMA netlink "kernel" in place of nlsock_talk() for common/net/rdma.c
 * (linked with -Wl,--wrap=nlsock_talk): it parses the requests rdma.c
 * builds and answers with real netlink messages,
 * following the kernel's visibility rules (exclusive mode: a device is seen
 * only from its netns; a port's netdev index only from the netdev's netns).
 * Every request is one fake_net operation, so it can be made to fail.
 */
struct fake_rdma {
	bool absent;           /* no RDMA netlink: every request is -EPROTONOSUPPORT */
	int mode_attr;         /* RDMA_NLDEV_SYS_ATTR_NETNS_MODE: 1 shared, 0 exclusive */
	bool before_5_2;       /* no SYS_GET handler: the kernel refuses it with -EINVAL */
	bool interrupt_dump;   /* the next device dump is interrupted once and retried */
	struct fake_rdma_dev devs[FAKE_RDMA_MAX_DEVS];
	unsigned int requests;
	uint8_t last[512];     /* the last request, as sent */
	size_t last_len;
	int last_bus;
};

extern struct fake_rdma fake_rdma;

/**
 * fake_rdma_reset() - no RDMA devices, shared mode
 */
void fake_rdma_reset(void);

/**
 * fake_rdma_add() - an RDMA device in a netns with a netdev on its port
 * Return: the device.
 */
struct fake_rdma_dev *fake_rdma_add(uint32_t index, const char *name, int ns, int ndev_ifindex);

/**
 * __wrap_nlsock_talk() - the fake RDMA netlink kernel, where common/net/rdma.c calls nlsock_talk()
 */
int __wrap_nlsock_talk(struct net_ns *ns, int protocol, struct nl_msg *msg,
		       int (*cb)(const struct nlmsghdr *nlh, void *data), void (*reset)(void *data),
		       void *data);

/**
 * fake_net_tmp_netns() - number of temporary netns nsfd_new() handed out
 */
unsigned int fake_net_tmp_netns(void);

#define FAKE_ETHTOOL_MAX 8

/*
 * What ethtool reports of a link, by ifindex (which survives netns moves). A
 * link without an entry answers as a veth does: no permanent address, no bus.
 */
struct fake_ethtool {
	int ifindex;          /* 0 for an unused entry */
	uint8_t perm[HWADDR_MAX];
	size_t perm_len;      /* 0: no permanent address */
	char bus_info[32];
};

extern struct fake_ethtool fake_ethtool[FAKE_ETHTOOL_MAX];

/**
 * fake_ethtool_set() - give a link a permanent address and a bus device
 * @ifindex: the link's index
 * @perm: permanent address, NULL for none
 * @perm_len: its length
 * @bus_info: bus device ("" or NULL for none)
 *
 * Return: the entry, NULL when the table is full.
 */
struct fake_ethtool *fake_ethtool_set(int ifindex, const uint8_t *perm, size_t perm_len,
				      const char *bus_info);
