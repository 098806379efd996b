/* A fake of common/net for unit tests: an in-memory kernel that logs every call and fails on demand */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/net/link.h"

/*
 * The fake replaces every function of common/net/{link,route,ns,sysctl,iface}.h,
 * common/util/nsfd.h and common/cni/ipam.h. A test links it with the plugin's
 * sources, dep_proto and the real kernel-error recorder common/net/neterr.c
 * (never with the rest of common/net): a failing operation leaves its text
 * for net_err_set(). Network namespaces are small integers (0 is the host);
 * a netns "path" registered with fake_net_add_netns() opens to a descriptor
 * the fake recognizes, and nsfd_run() switches the current one; a handle
 * (net_ns_open()) is a netns number, and a call through it runs with that
 * netns current, as the real handle's socket talks to its netns.
 *
 * Every call is one operation: it is appended to the log as one line, e.g.
 * "host: create ipoib cniib0 link=ib0 pkey=0x7fff mode=0 umcast=1", and counted;
 * " [blocked]" ends the line when SIGTERM, SIGINT and SIGHUP were all blocked.
 * fake_net.fail_at = N makes the Nth operation fail with fake_net.fail_errno
 * (without changing anything), which is how every step's undo is tested.
 */

#define FAKE_NET_MAX_LINKS 32
#define FAKE_NET_MAX_NS 8
#define FAKE_NET_LOG_SIZE 16384

/* Netns descriptors handed out by nsfd_open(): FAKE_NET_FD_BASE + ns. */
#define FAKE_NET_FD_BASE 1000

struct fake_link {
	bool used;
	int ns;
	struct net_link link;
};

struct fake_sysctl {
	int ns;
	char path[128];
	char value[32];
};

struct fake_net {
	struct fake_link links[FAKE_NET_MAX_LINKS];
	char ns_path[FAKE_NET_MAX_NS][128]; /* "" for an unused or destroyed netns */
	int current;                        /* the caller's netns */
	int next_ifindex;
	struct fake_sysctl sysctls[16];
	size_t n_sysctls;

	unsigned int ops;                   /* operations so far */
	unsigned int fail_at;               /* 1-based operation to fail, 0 for none */
	int fail_errno;                     /* positive errno for the failing operation */
	bool move_clash_einval;             /* a kernel before 5.14: a move onto a taken name is EINVAL */
	char log[FAKE_NET_LOG_SIZE];
	size_t log_len;

	const char *ipam_result;            /* JSON printed by the fake IPAM on ADD */
	int ipam_allocated;                 /* ADDs minus DELs that released something */
};

extern struct fake_net fake_net;

/**
 * fake_net_reset() - an empty host netns, no failure armed, IPAM returning @ipam_result
 * @ipam_result: result JSON (any version) for IPAM ADD, NULL for an empty one
 */
void fake_net_reset(const char *ipam_result);

/**
 * fake_net_add_netns() - register a netns reachable at a path
 * Return: its number.
 */
int fake_net_add_netns(const char *path);

/**
 * fake_net_destroy_netns() - what the kernel does when the last reference goes
 * @ns: netns number
 *
 * Links whose kind is "ipoib" are refunded to the host as dev<ifindex>, as
 * ipoib_link_ops.netns_refund makes the real kernel do; others are deleted.
 */
void fake_net_destroy_netns(int ns);

/**
 * fake_net_add_link() - put a link into a netns (not an operation, not logged)
 * @ns: netns number
 * @name: interface name
 * @kind: IFLA_INFO_KIND ("" for a physical device)
 * @type: ARPHRD_*
 * @mtu: MTU
 *
 * Return: the link, for the test to adjust (hwaddr, ipoib fields, ...).
 */
struct net_link *fake_net_add_link(int ns, const char *name, const char *kind,
				   unsigned short type, unsigned int mtu);

/**
 * fake_net_find() - a link by name in a netns
 * Return: the link, NULL when there is none.
 */
struct net_link *fake_net_find(int ns, const char *name);

/**
 * fake_net_place() - put a link of the fake into another netns (not an operation, not logged)
 * @link: a link fake_net_add_link() or fake_net_find() returned
 * @ns: netns number
 */
void fake_net_place(struct net_link *link, int ns);

/**
 * fake_net_count() - number of links in a netns
 */
size_t fake_net_count(int ns);

/**
 * fake_net_sysctl() - the value last written to a sysctl path in a netns
 * Return: the value, NULL when never written.
 */
const char *fake_net_sysctl(int ns, const char *path);

/**
 * fake_net_op() - count and log one operation; for fakes of other common/net calls
 * @fmt: log line after the "<netns>: " prefix
 *
 * Return: 0, or -fail_errno when this is the operation to fail.
 */
int fake_net_op(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Called after a rename succeeded, NULL for nothing: for fakes whose own
 * view of a link's name must follow it (sysfs).
 */
extern void (*fake_net_renamed)(int ifindex, const char *name);

struct net_ns;

/**
 * fake_net_enter() - make a handle's netns the fake's current one (NULL: stay)
 * @ns: handle from net_ns_open()
 *
 * Return: the netns that was current, to put back in fake_net.current.
 */
int fake_net_enter(struct net_ns *ns);

/* Runs @call (an int expression) as if in @ns's netns: what the real handle's socket does. */
#define IN_NS(ns, call)                                                                    \
	__extension__({                                                                    \
		int saved_ = fake_net_enter(ns);                                           \
		int r_ = (call);                                                           \
		fake_net.current = saved_;                                                 \
		r_;                                                                        \
	})

/**
 * fake_net_termination_held() - whether any of SIGTERM, SIGINT, SIGHUP is blocked now;
 * after a plugin returns, none may be
 */
bool fake_net_termination_held(void);

/**
 * fake_net_log_lines() - the operation log as one string, lines joined by '\n'
 */
const char *fake_net_log_lines(void);
