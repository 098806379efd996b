/* portmap's iptables backend: upstream's CNI-HOSTPORT-* chains and a CNI-DN- chain per container */
#pragma once

#include <stddef.h>

struct cni_attachment;
struct cni_err;
struct portmap_conf;

/**
 * portmap_ipt_add() - the container's chain, its rules and the shared chains, each family
 *                     of its addresses in one iptables-restore
 * @c: config
 * @name: the network's name (the chain's hash, the entry rules' comment)
 * @cid: the container ID
 * @err: code 100 naming the command that failed
 *
 * What upstream's forwardPorts() makes, rule for rule and in order. A family whose
 * restore fails leaves nothing of it; the other family, done before, is taken back.
 *
 * Return: 0 on success, negative errno on failure.
 */
int portmap_ipt_add(const struct portmap_conf *c, const char *name, const char *cid,
		    struct cni_err *err);

/**
 * portmap_ipt_check() - the container's chain, rules and entry rules there ("-C"), as upstream
 * @c: config
 * @name: the network's name
 * @cid: the container ID
 * @err: code 103 naming what is missing
 *
 * Return: 0 when all are there, negative errno otherwise.
 */
int portmap_ipt_check(const struct portmap_conf *c, const char *name, const char *cid,
		      struct cni_err *err);

/**
 * portmap_ipt_del() - the container's chain and the rules jumping to it, IPv4 and IPv6
 * @name: the network's name
 * @cid: the container ID
 * @err: code 100 when neither iptables nor ip6tables can be run, or a deletion fails
 *
 * Return: 0 when nothing of the container is left, negative errno otherwise.
 */
int portmap_ipt_del(const char *name, const char *cid, struct cni_err *err);

/**
 * portmap_ipt_gc() - the chains of this network's containers that are not in @valid
 * @name: the network's name (read back from the entry rules' comments)
 * @valid: the attachments to keep
 * @n: their number
 * @err: as portmap_ipt_del()
 *
 * Return: 0 on success, negative errno on failure.
 */
int portmap_ipt_gc(const char *name, const struct cni_attachment *valid, size_t n,
		   struct cni_err *err);

/**
 * portmap_ipt_usable() - whether the host's iptables lists its nat table
 * @err: code 100 saying why not
 *
 * Return: 1 when it does, 0 when not.
 */
int portmap_ipt_usable(struct cni_err *err);
