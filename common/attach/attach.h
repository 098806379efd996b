/* Attaching an interface to a pod: the steps every interface plugin shares */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/result.h"

struct cni_ctx;
struct cni_err;
struct cni_iface;
struct net_link;
struct net_ns;

/*
 * One command's hold on the pod: CNI_NETNS (the dispatch's descriptor), a
 * handle through which common/net talks to it from the host, and what IPAM
 * answered. A plugin reads as its own steps between attach_open() and
 * attach_close().
 */
struct attach {
	const struct cni_ctx *ctx;
	int pod_fd;             /* CNI_NETNS (borrowed from the context), -1 when not open */
	struct net_ns *pod;     /* talks to the pod's netns */
	struct net_ns *host;    /* talks to the plugin's own (the host's) netns */
	struct cni_result ipam; /* IPAM's result, after attach_ipam_add() */
	bool ipam_added;        /* attach_ipam_undo() has something to release */
	bool ipv6_autoconf;     /* "ipv6Autoconf": router advertisements and SLAAC left on */
};

/**
 * attach_open() - take hold of CNI_NETNS for ADD or CHECK, and read the keys every plugin shares
 * @a: filled, to release with attach_close() whatever this returns
 * @ctx: context, CNI_NETNS opened (cni_plugin_open_netns())
 * @err: code 4 when the path is not a network namespace that could be opened; code 6 for
 *       a shared key of the wrong type
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_open(struct attach *a, const struct cni_ctx *ctx, struct cni_err *err);

/**
 * attach_open_del() - take hold of CNI_NETNS for DEL, where a netns that is gone is no error
 * @a: filled, to release with attach_close() whatever this returns
 * @ctx: context, CNI_NETNS opened (cni_plugin_open_netns())
 * @err: code 4 when the path could not be opened for another reason, or is no
 *       network namespace of any kind a pod could leave (a FIFO, a device)
 *
 * Gone means: CNI_NETNS empty, the path missing, or a plain file (what a netns
 * bind mount leaves once unmounted).
 *
 * Return: 1 when open, 0 when the netns is gone, negative errno on failure.
 */
int attach_open_del(struct attach *a, const struct cni_ctx *ctx, struct cni_err *err);

/**
 * attach_close() - release what attach_open*() and attach_ipam_add() hold
 * @a: the attachment (may be zeroed)
 */
void attach_close(struct attach *a);

/**
 * attach_tmp_name() - the name a new link of this attachment has until it is renamed
 * @ctx: context (CNI_CONTAINERID and CNI_IFNAME)
 * @prefix: five characters saying which plugin made it ("cniib")
 * @buf: output
 * @size: its size, at least IFNAMSIZ
 *
 * Derived from the attachment, the same for its every ADD and DEL: a plugin
 * killed between creating a link and renaming it leaves it under a name the
 * attachment's DEL can find.
 */
void attach_tmp_name(const struct cni_ctx *ctx, const char *prefix, char *buf, size_t size);

/**
 * attach_ipam_add() - IPAM ADD, when the config has IPAM
 * @a: the attachment; IPAM's result lands in @a->ipam
 * @err: IPAM's error passed through, or code 101 when the result holds no
 *       address (it is released before returning)
 *
 * Return: 0 on success (and without IPAM), negative errno on failure.
 */
int attach_ipam_add(struct attach *a, struct cni_err *err);

/**
 * attach_ipam_undo() - release what attach_ipam_add() reserved, after a later step failed
 * @a: the attachment
 *
 * A failure is logged, not returned: the ADD's own error is the one to report.
 */
void attach_ipam_undo(struct attach *a);

/**
 * attach_delete_link() - delete a link of our kind by name, for DEL and for what a killed ADD left
 * @ns: the netns it is in (NULL: the plugin's own)
 * @name: its name (CNI_IFNAME, or the attachment's temporary name)
 * @kind: the kind our plugin makes ("macvlan", "ipoib")
 * @what: the kind as a log line names it ("a macvlan")
 * @err: code 100 with the kernel's text
 *
 * A link of that name of another kind is another plugin's (a DEL after a failed
 * ADD): it is logged and left in place. No such link is no error, so that DEL
 * succeeds when repeated.
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_delete_link(struct net_ns *ns, const char *name, const char *kind, const char *what,
		       struct cni_err *err);

/**
 * attach_del_created() - DEL of a plugin that created CNI_IFNAME in the pod: IPAM, then the link
 * @ctx: context
 * @kind: as for attach_delete_link()
 * @what: as for attach_delete_link()
 * @err: IPAM's error, or as attach_open_del() and attach_delete_link()
 *
 * IPAM first: its reservation must go even when the netns is already gone.
 *
 * Return: 0 on success (a netns or link already gone included), negative errno on failure.
 */
int attach_del_created(const struct cni_ctx *ctx, const char *kind, const char *what,
		       struct cni_err *err);

/**
 * attach_link_names() - the links of a netns a master could be, for a message naming them
 * @ns: the netns (its handle; NULL: the plugin's own)
 * @type: ARPHRD_ETHER or ARPHRD_INFINIBAND; loopbacks are left out
 * @buf: "a, b" (" and N more" past its room), or "none"
 * @size: its size, at least 32
 *
 * For a master that is not there: the fix is one of those names. A netns that cannot
 * be listed gives "unknown".
 */
void attach_link_names(struct net_ns *ns, unsigned short type, char *buf, size_t size);

/**
 * attach_undo_link() - delete the link an ADD created, after a later step failed
 * @ns: the netns it is in now (NULL: the plugin's own)
 * @link: the link as created, by index so that a same-named stranger is never hit; when
 *        its index is 0, looked up by @tmp_name (and filled)
 * @tmp_name: the name it was created with
 *
 * A failure is logged, not returned: the ADD's own error is the one to report.
 */
void attach_undo_link(struct net_ns *ns, struct net_link *link, const char *tmp_name);

/**
 * attach_configure() - the pod's interface as IPAM's result says, or just up without addresses
 * @a: the attachment (after attach_ipam_add())
 * @link: the interface CNI_IFNAME in the pod, as looked up
 * @err: code 100 with the kernel's text
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_configure(struct attach *a, const struct net_link *link, struct cni_err *err);

/**
 * attach_result() - the ADD result: the pod's interface, IPAM's addresses, routes and dns
 * @a: the attachment (after attach_ipam_add())
 * @hwaddr: the interface's hardware address, NULL for none (a DPDK device)
 * @hwaddr_len: its length
 * @ret: result to fill
 * @err: code 999 when out of memory
 *
 * The config's dns wins, as in the reference; without one, IPAM's is kept.
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_result(struct attach *a, const uint8_t *hwaddr, size_t hwaddr_len,
		  struct cni_result *ret, struct cni_err *err);

/**
 * attach_address() - IPAM, the interface configured as its result says, the ADD result
 * @a: the attachment
 * @link: the interface CNI_IFNAME in the pod, as looked up
 * @ret: result to fill
 * @err: as attach_ipam_add(), attach_configure() and attach_result()
 *
 * The steps every plugin that creates its interface in the pod takes after
 * creating it. On a failure after IPAM reserved, the reservation is released
 * (attach_ipam_undo()); the interface is the caller's to remove.
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_address(struct attach *a, const struct net_link *link, struct cni_result *ret,
		   struct cni_err *err);

/**
 * attach_address_created() - attach_address() on the interface an ADD just created
 * @a: the attachment
 * @what: the kind of link, for the error message ("macvlan", "dummy")
 * @ret: result to fill
 * @err: code 100 when the new link cannot be found, else as attach_address()
 *
 * Looks CNI_IFNAME up in the pod and addresses it; from the lookup on, every
 * failure removes the link again (attach_undo_link()).
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_address_created(struct attach *a, const char *what, struct cni_result *ret,
			   struct cni_err *err);

/**
 * attach_check_begin() - what every CHECK starts with: the netns, IPAM CHECK, prevResult's interface
 * @a: filled, to release with attach_close() whatever this returns
 * @ctx: context
 * @ret_iface: the interface prevResult records for CNI_IFNAME
 * @err: code 4 for the netns, IPAM's error, code 7 without a prevResult, 103
 *       when it has no such interface or names another netns as its sandbox
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_check_begin(struct attach *a, const struct cni_ctx *ctx,
		       const struct cni_iface **ret_iface, struct cni_err *err);

/**
 * attach_check_link() - CNI_IFNAME in the pod, for CHECK
 * @a: the attachment
 * @ret: the link, written only on success
 * @err: code 103 when the pod has no such link
 *
 * Return: 0 on success, negative errno on failure.
 */
int attach_check_link(struct attach *a, struct net_link *ret, struct cni_err *err);

/**
 * attach_check_end() - what every CHECK ends with: the recorded MAC, addresses and routes
 * @a: the attachment
 * @iface: from attach_check_begin()
 * @link: from attach_check_link()
 * @err: code 103 on a mismatch
 *
 * Return: 0 when everything matches, negative errno otherwise.
 */
int attach_check_end(struct attach *a, const struct cni_iface *iface, const struct net_link *link,
		     struct cni_err *err);
