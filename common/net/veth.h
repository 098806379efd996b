/* veth pairs: one end in the caller's netns (a bridge port), the other made in a pod's */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct net_ns;

struct net_veth {
	const char *name;           /* the end made where the request is sent */
	int master_ifindex;         /* that end's master (a bridge), 0 for none */
	bool up;                    /* that end up at once */
	bool no_queue;              /* that end with a transmit queue length of 0 */
	const char *peer_name;      /* the other end */
	int peer_netns_fd;          /* where the other end is made, -1 for beside the first */
	const uint8_t *peer_hwaddr; /* 6 bytes, NULL: the kernel's random one (the other end is
				     * made down: the kernel cannot open it before its peer exists) */
	unsigned int mtu;           /* both ends, 0: the kernel's default */
};

/**
 * net_veth_create() - make a veth pair in one request
 * @ns: the netns of the first end (its handle), NULL for the caller's
 * @v: the pair
 *
 * One RTM_NEWLINK: the kernel makes both ends, each where it belongs, brings up
 * the first when asked and enslaves it to its master before answering, so that
 * nothing of the pair exists half made. What upstream's SetupVeth() and
 * LinkSetMaster() leave in the kernel, in one step instead of six.
 *
 * Return: 0 on success, -EEXIST when a name is taken (either netns), negative
 * errno otherwise.
 */
int net_veth_create(struct net_ns *ns, const struct net_veth *v);
