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
 * fake_vf_reset() - no VFs
 */
void fake_vf_reset(void);

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

#define FAKE_VF_MAX 4

/*
 * An SR-IOV VF of an InfiniBand PF: the GUIDs its PF was given for it
 * (RTM_SETLINK with IFLA_VFINFO_LIST, in place of nlsock_talk() for
 * common/net/vf.c) take effect when its driver binds again
 * (device_pci_rebind(), linked with -Wl,--wrap): its netdev then gets a new
 * index, is down without alias, has the port GUID in its hardware address and,
 * when @rebind_name is set, that name (as the netdev's entry in sysfs).
 */
struct fake_vf {
	bool used;
	char pci[32];
	int pf_ifindex;
	uint32_t index;
	int netdev_ifindex;       /* its netdev, in any netns */
	const char *rebind_name;  /* the kernel's name after a bind, NULL: the same */
	bool node_set, port_set;
	uint64_t node_guid, port_guid; /* what the PF holds for it */
};

struct fake_vfs {
	struct fake_vf vfs[FAKE_VF_MAX];
	unsigned int rebinds;
	uint8_t last[256];        /* the last RTM_SETLINK, as sent */
	size_t last_len;
};

extern struct fake_vfs fake_vfs;

/**
 * fake_vf_add() - a VF of an InfiniBand PF, with its netdev
 * Return: the VF.
 */
struct fake_vf *fake_vf_add(const char *pci, int pf_ifindex, uint32_t index, int netdev_ifindex);

/**
 * __wrap_device_pci_rebind() - the fake of a driver's unbind and bind
 */
int __wrap_device_pci_rebind(const char *addr);
