/* Traffic control: the ifb device, qdiscs and the filter that redirects a link's ingress */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct net_ns;

/*
 * What upstream's bandwidth plugin (v1.9.1) builds, through the message API as
 * vishvananda/netlink sends it: a tbf qdisc (handle 1:, root) on the host side of
 * the pod's link for the pod's ingress; for its egress an ifb device, an ingress
 * qdisc (ffff:) on the host link, a u32 filter matching all that redirects to the
 * ifb (mirred), and a tbf qdisc on the ifb. No htb: v1.9.1 has neither classes nor
 * shapedSubnets.
 */

#define TC_HANDLE(major, minor) ((uint32_t)(major) << 16 | (uint16_t)(minor))
#define TC_HANDLE_ROOT 0xffffffffu    /* TC_H_ROOT */
#define TC_HANDLE_INGRESS 0xfffffff1u /* TC_H_INGRESS */

/* A tbf qdisc's parameters, as the kernel keeps them. */
struct tc_tbf {
	uint64_t rate;   /* bytes per second */
	uint32_t limit;  /* bytes queued at most */
	uint32_t buffer; /* the bucket, in scheduler ticks (tc_ticks()) */
};

/* A mirred action: a copy or a redirect of the packet to another link. */
struct tc_redirect_action {
	int eaction;     /* TCA_EGRESS_REDIR, TCA_EGRESS_MIRROR, ... */
	int action;      /* what the filter does next: TC_ACT_STOLEN, TC_ACT_OK, ... */
	int ifindex;     /* the link it goes to */
};

/* A qdisc as a dump reads it back. */
struct tc_qdisc_info {
	uint32_t handle, parent;
	char kind[16];
	bool has_tbf;
	struct tc_tbf tbf;
};

/**
 * tc_ticks() - a time in the packet scheduler's ticks, as vishvananda/netlink counts them
 * @usec: microseconds (whole: upstream cuts the time to an integer before it scales it)
 * @ret: ticks, written only on success
 *
 * The scale is the kernel's, read from /proc/net/psched.
 *
 * Return: 0 on success, -ERANGE when the ticks do not fit in 32 bits (where upstream's
 * conversion wraps), negative errno when the scale cannot be read.
 */
int tc_ticks(uint32_t usec, uint32_t *ret);

/**
 * tc_bucket_bytes() - what a tbf bucket holds, in bytes, as the kernel reckons it
 * @ticks: the bucket, in the packet scheduler's ticks
 * @rate: bytes per second
 * @ret: the bytes (tbf refuses a bucket of less than one: its largest packet would be 0)
 *
 * Return: 0 on success, negative errno when the scale cannot be read.
 */
int tc_bucket_bytes(uint32_t ticks, uint64_t rate, double *ret);

/**
 * tc_ifb_create() - an ifb device, up, with a transmit queue length of 0 (upstream's)
 * @ns: the netns, NULL for the caller's
 * @name: its name
 * @mtu: its MTU (the pod link's), 0 for the kernel's
 *
 * Return: 0 on success, -EEXIST when the name is taken, negative errno otherwise.
 */
int tc_ifb_create(struct net_ns *ns, const char *name, unsigned int mtu);

/**
 * tc_ifb_delete() - delete an ifb device by name; a missing one is no error
 * @ns: the netns, NULL for the caller's
 * @name: its name
 *
 * Return: 0 when deleted or missing, -EPERM when the link of that name is not an ifb,
 * negative errno otherwise.
 */
int tc_ifb_delete(struct net_ns *ns, const char *name);

/**
 * tc_qdisc_add_ingress() - the ingress qdisc (ffff:) of a link, for filters on what it receives
 * @ns: the netns, NULL for the caller's
 * @ifindex: the link
 *
 * Return: 0 on success, -EEXIST when it has one, negative errno otherwise.
 */
int tc_qdisc_add_ingress(struct net_ns *ns, int ifindex);

/**
 * tc_qdisc_add_tbf() - a tbf qdisc (1:) at a link's root
 * @ns: the netns, NULL for the caller's
 * @ifindex: the link
 * @t: its parameters (a rate past 32 bits goes in TCA_TBF_RATE64 too)
 *
 * Return: 0 on success, -EINVAL for a zero rate or buffer, negative errno otherwise.
 */
int tc_qdisc_add_tbf(struct net_ns *ns, int ifindex, const struct tc_tbf *t);

/**
 * tc_qdisc_delete() - delete a link's qdisc
 * @ns: the netns, NULL for the caller's
 * @ifindex: the link
 * @parent: TC_HANDLE_ROOT or TC_HANDLE_INGRESS
 *
 * Return: 0 on success, -ENOENT when there is none there, negative errno otherwise.
 */
int tc_qdisc_delete(struct net_ns *ns, int ifindex, uint32_t parent);

/**
 * tc_filter_add_redirect() - a u32 filter that matches every packet and runs mirred actions
 * @ns: the netns, NULL for the caller's
 * @ifindex: the link
 * @parent: the qdisc it hangs on (TC_HANDLE(0xffff, 0) for ingress)
 * @prio: its priority
 * @classid: the class it files packets in (upstream: 1:1), 0 for none
 * @acts: its actions, in order
 * @n: their number (1 to 8)
 *
 * Return: 0 on success, negative errno on failure.
 */
int tc_filter_add_redirect(struct net_ns *ns, int ifindex, uint32_t parent, uint16_t prio,
			   uint32_t classid, const struct tc_redirect_action *acts, size_t n);

/**
 * tc_qdisc_list() - a link's qdiscs
 * @ns: the netns, NULL for the caller's
 * @ifindex: the link
 * @ret: malloc'ed array, written only on success
 * @ret_n: its length
 *
 * Return: 0 on success, negative errno on failure.
 */
int tc_qdisc_list(struct net_ns *ns, int ifindex, struct tc_qdisc_info **ret, size_t *ret_n);
