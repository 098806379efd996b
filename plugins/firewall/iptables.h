/* firewall's iptables backend: CNI-FORWARD and its admin chain, and the ingress policy's chains */
#pragma once

#include <stddef.h>

struct cni_err;
struct firewall_conf;
struct ip_prefix;

/**
 * firewall_ipt_add() - what upstream's iptables backend and ingress policy add, each family
 *                      of the addresses in one iptables-restore
 * @c: config (its addresses; the policy's chains, regardless of the backend, when @rules is false)
 * @rules: the backend's chains and accept rules (else only the policy's)
 * @err: code 100 naming the command that failed
 *
 * Return: 0 on success (a family that fails leaves nothing of it; one done before it is
 * taken back), negative errno on failure.
 */
int firewall_ipt_add(const struct firewall_conf *c, bool rules, struct cni_err *err);

/**
 * firewall_ipt_del() - the accept rules of some addresses (the chains stay, as upstream)
 * @ips: the addresses
 * @n: their number
 * @err: code 100 when a family's iptables cannot be run or its restore fails
 *
 * Return: 0 when none is left, negative errno otherwise.
 */
int firewall_ipt_del(const struct ip_prefix *ips, size_t n, struct cni_err *err);

/**
 * firewall_ipt_check() - the chains, the jumps and each address's rules are there
 * @c: config
 * @err: code 103 naming what is missing
 *
 * Return: 0 when they are, negative errno otherwise.
 */
int firewall_ipt_check(const struct firewall_conf *c, struct cni_err *err);
