/* Links: the only code that talks rtnetlink about links */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/util/hwaddr.h"

struct net_ns;

struct net_link {
	int ifindex;
	char name[IFNAMSIZ];
	char kind[32];            /* IFLA_INFO_KIND, "" when none (e.g. a NIC) */
	unsigned int mtu;
	unsigned int flags;       /* IFF_* */
	unsigned short type;      /* ARPHRD_* */
	uint8_t hwaddr[HWADDR_MAX];
	size_t hwaddr_len;
	int link_ifindex;         /* IFLA_LINK, 0 when none */
	char alias[256];          /* IFLA_IFALIAS, "" when none */
	uint32_t macvlan_mode;    /* MACVLAN_MODE_*, when kind is "macvlan" */
	uint16_t ipoib_pkey;      /* when kind is "ipoib" */
	uint16_t ipoib_mode;
	uint16_t ipoib_umcast;
	int master_ifindex;       /* IFLA_MASTER (a VRF, a bridge), 0 when none */
	uint16_t ipvlan_mode;     /* IPVLAN_MODE_*, when kind is "ipvlan" */
	uint16_t ipvlan_flags;    /* IPVLAN_F_* */
	uint16_t vlan_id;         /* when kind is "vlan" */
	uint32_t vrf_table;       /* when kind is "vrf" */
	uint8_t operstate;        /* IFLA_OPERSTATE, IF_OPER_* */
};

enum net_child_kind {
	NET_CHILD_MACVLAN,
	NET_CHILD_IPOIB,
	NET_CHILD_DUMMY,        /* no master: master_ifindex 0 */
	NET_CHILD_IFB,          /* no master: what tc redirects a link's ingress to */
	NET_CHILD_IPVLAN,
	NET_CHILD_VLAN,
	NET_CHILD_VRF,          /* no master: master_ifindex 0 */
};

/* A child link created off a master (macvlan, IPoIB, ipvlan, VLAN), or a dummy, ifb or VRF link. */
struct net_child {
	enum net_child_kind kind;
	const char *name;       /* name given at creation */
	int master_ifindex;     /* IFLA_LINK; 0 for a dummy or an ifb */
	int netns_fd;           /* IFLA_NET_NS_FD: create directly there; -1 for the current netns */
	unsigned int mtu;       /* 0: inherit */
	const uint8_t *hwaddr;  /* NULL: the kernel picks */
	size_t hwaddr_len;
	bool up;                /* created up (IFF_UP), for a link with nothing to set first */
	bool has_txqlen;        /* IFLA_TXQLEN sent (upstream's ifb is made with 0) */
	uint32_t txqlen;
	union {
		struct {
			uint32_t mode;         /* MACVLAN_MODE_* */
			uint32_t bc_queue_len; /* sent only when > 0 */
		} macvlan;
		struct {
			uint16_t pkey;
			uint16_t mode;   /* IPOIB_MODE_DATAGRAM / _CONNECTED */
			uint16_t umcast;
		} ipoib;
		struct {
			uint16_t mode;   /* IPVLAN_MODE_* */
			uint16_t flags;  /* IPVLAN_F_* */
		} ipvlan;
		struct {
			uint16_t id;     /* 0-4094 */
		} vlan;
		struct {
			uint32_t table;  /* not 0 */
		} vrf;
	};
};

/**
 * net_link_get_by_name() - look up a link in a netns
 * @ns: the netns (its handle), NULL for the caller's
 * @name: interface name
 * @ret: link, written only on success
 *
 * Return: 0 on success, -ENODEV when there is no such link, negative errno otherwise.
 */
int net_link_get_by_name(struct net_ns *ns, const char *name, struct net_link *ret);

/**
 * net_link_get_by_index() - look up a link in a netns
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @ret: link, written only on success
 *
 * Return: 0 on success, -ENODEV when there is no such link, negative errno otherwise.
 */
int net_link_get_by_index(struct net_ns *ns, int ifindex, struct net_link *ret);

/**
 * net_link_get_by_hwaddr() - the first link with a hardware address
 * @ns: the netns (its handle), NULL for the caller's
 * @hwaddr: address bytes
 * @len: number of bytes
 * @ret: link, written only on success
 *
 * Return: 0 on success, -ENODEV when none matches, negative errno otherwise.
 */
int net_link_get_by_hwaddr(struct net_ns *ns, const uint8_t *hwaddr, size_t len,
			   struct net_link *ret);

/**
 * net_link_get_by_alias() - the first link with an alias
 * @ns: the netns (its handle), NULL for the caller's
 * @alias: IFLA_IFALIAS text
 * @ret: link, written only on success
 *
 * Return: 0 on success, -ENODEV when none matches, negative errno otherwise.
 */
int net_link_get_by_alias(struct net_ns *ns, const char *alias, struct net_link *ret);

/**
 * net_link_find() - the first link of a netns a predicate accepts
 * @ns: the netns (its handle), NULL for the caller's
 * @match: called for each link of a dump, without side effects on the kernel
 *         (it may run again for the same link when the kernel interrupts a dump)
 * @data: passed to @match
 * @ret: link, written only on success
 *
 * Return: 0 on success, -ENODEV when none matches, negative errno otherwise.
 */
int net_link_find(struct net_ns *ns, bool (*match)(const struct net_link *link, void *data),
		  void *data,
		  struct net_link *ret);

/**
 * net_link_list() - every link of a netns
 * @ns: the netns (its handle), NULL for the caller's
 * @ret: malloc'ed array, written only on success
 * @ret_n: number of entries
 *
 * Return: 0 on success, negative errno otherwise.
 */
int net_link_list(struct net_ns *ns, struct net_link **ret, size_t *ret_n);

/**
 * net_link_create() - create a child link (RTM_NEWLINK, NLM_F_CREATE|NLM_F_EXCL)
 * @ns: the netns (its handle), NULL for the caller's
 * @child: what to create
 *
 * Return: 0 on success, negative errno (e.g. -EEXIST) on failure.
 */
int net_link_create(struct net_ns *ns, const struct net_child *child);

/**
 * net_link_delete() - delete a link
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 *
 * Return: 0 on success, -ENODEV when it is already gone, negative errno otherwise.
 */
int net_link_delete(struct net_ns *ns, int ifindex);

/**
 * net_link_set_netns() - move a link into the netns behind a file descriptor
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index in @ns
 * @netns_fd: target netns
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_link_set_netns(struct net_ns *ns, int ifindex, int netns_fd);

/**
 * net_link_move() - move a link into another netns and, in the same request, set its alias
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index in @ns
 * @netns_fd: target netns
 * @alias: IFLA_IFALIAS it has in the target ("" clears it), NULL to keep the one it has
 *
 * One request: nothing can stop the plugin between the move and the alias.
 * The kernel applies the alias after the move, in the target netns.
 *
 * Return: 0 on success, -EEXIST when the target has a link of that name,
 * negative errno otherwise.
 */
int net_link_move(struct net_ns *ns, int ifindex, int netns_fd, const char *alias);

/**
 * net_link_set_master() - enslave a link to a master (a VRF), or free it
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @master_ifindex: the master's index, 0 for none (`ip link set ... nomaster`)
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_link_set_master(struct net_ns *ns, int ifindex, int master_ifindex);

/**
 * net_link_set_name() - rename a link (it must be down)
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @name: new name
 *
 * Return: 0 on success, -EEXIST when the name is taken, negative errno otherwise.
 */
int net_link_set_name(struct net_ns *ns, int ifindex, const char *name);

/**
 * net_link_set_up() - set or clear IFF_UP
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @up: true for up
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_link_set_up(struct net_ns *ns, int ifindex, bool up);

/**
 * net_link_set_mtu() - set the MTU
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @mtu: new MTU
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_link_set_mtu(struct net_ns *ns, int ifindex, unsigned int mtu);

/**
 * net_link_set_alias() - set IFLA_IFALIAS ("" clears it)
 * @ns: the netns (its handle), NULL for the caller's
 * @ifindex: interface index
 * @alias: text
 *
 * Return: 0 on success, negative errno on failure.
 */
int net_link_set_alias(struct net_ns *ns, int ifindex, const char *alias);
