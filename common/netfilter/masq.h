/* ipMasq: masquerading what a pod sends beyond its subnet, as upstream's pkg/ip does it */
#pragma once

#include <stddef.h>

struct cni_attachment;
struct cni_conf;
struct cni_err;
struct ip_prefix;

/*
 * Upstream (v1.9.1, pkg/ip ipmasq_*_linux.go) keeps an attachment's masquerade
 * either in iptables' nat table (a chain "CNI-<hash of network and container>"
 * per container, a POSTROUTING jump to it per address, every rule commented
 * 'name: "NET" id: "ID"') or in nftables' table inet cni_plugins_masquerade (a
 * rule per address in chain masq_checks, its comment starting with the hashes
 * of the network and of "<ifname>:<container ID>"). The same names here: a node
 * moving between upstream's binaries and ours finds and removes the other's.
 */
enum masq_backend {
	MASQ_DEFAULT,   /* upstream's choice: iptables when it works, else nftables */
	MASQ_IPTABLES,
	MASQ_NFTABLES,
};

/* Whose masquerade: what upstream names the rules after. */
struct masq_owner {
	const char *network;      /* the network's name */
	const char *ifname;       /* the pod's interface (nftables only: iptables ignores it) */
	const char *container_id;
};

/* nftables' table and chain, shared with upstream's ptp and bridge. */
#define MASQ_NFT_TABLE "cni_plugins_masquerade"
#define MASQ_NFT_CHAIN "masq_checks"

/**
 * masq_backend_parse() - "ipMasqBackend"'s value
 * @s: "iptables" or "nftables"; NULL for upstream's default
 * @ret: the backend, written only on success
 *
 * Return: 0 on success, -EINVAL for another word.
 */
int masq_backend_parse(const char *s, enum masq_backend *ret);

/**
 * masq_setup() - masquerade what each address sends outside its own subnet
 * @backend: the config's, or MASQ_DEFAULT
 * @o: whose
 * @addrs: the pod's addresses with their prefix length (IPAM's)
 * @n: how many
 * @err: code 100 naming the command or change that failed; code 7 when an iptables
 *       chain of that name exists with rules that are not this container's (the node's own)
 *
 * Multicast destinations are left alone, as upstream does. A repeated setup adds
 * nothing twice (nftables: the owner's earlier rules are replaced).
 *
 * Return: 0 on success, negative errno on failure (a failed nftables batch changed
 * nothing; iptables' changes of one family are applied together).
 */
int masq_setup(enum masq_backend backend, const struct masq_owner *o,
	       const struct ip_prefix *addrs, size_t n, struct cni_err *err);

/**
 * masq_check() - whether masq_setup() can work with a backend (CNI STATUS)
 * @backend: the config's, or MASQ_DEFAULT
 * @err: code 50 saying what is missing
 *
 * Return: 0 when it can, -ENOTSUP otherwise.
 */
int masq_check(enum masq_backend backend, struct cni_err *err);

/**
 * masq_status() - STATUS of a plugin that masquerades: masq_check() when the config asks
 * @conf: the network config
 * @err: as masq_check()
 *
 * Read leniently, as a runtime probing the network and the common keys' warning test
 * expect: checked when "ipMasq" is true and there is IPAM; a backend not named as a
 * string, or unknown, is the default one.
 *
 * Return: 0 when it can or is not asked to, -ENOTSUP otherwise.
 */
int masq_status(const struct cni_conf *conf, struct cni_err *err);

/**
 * masq_teardown() - remove an owner's masquerade from both backends, whichever wrote it
 * @o: whose
 * @addrs: its addresses when known; NULL for every one it has
 * @n: how many
 * @err: code 100 naming what failed
 *
 * The rules are found by their names and comments: the pod's netns may be gone.
 * iptables names a chain after network and container, not interface: given
 * @addrs, only their jumps go, and the chain when no other jump to it is left
 * (another interface of the container in the same network). A backend the node lacks (no iptables binary, no
 * nf_tables in the kernel) has nothing to remove. An iptables chain that holds
 * rules not of this owner is left in place (logged). Removing nothing is no error.
 *
 * Return: 0 on success, negative errno on failure.
 */
int masq_teardown(const struct masq_owner *o, const struct ip_prefix *addrs, size_t n,
		  struct cni_err *err);

/**
 * masq_gc() - remove a network's masquerade of every attachment not in a list
 * @network: the network's name
 * @valid: the attachments to keep (CNI GC's "cni.dev/valid-attachments")
 * @n: how many
 * @err: code 100 naming what failed
 *
 * nftables as upstream's GCIPMasqForNetwork(); iptables (where upstream has no GC)
 * by the comment on each POSTROUTING jump: a container of this network not in
 * @valid loses its jumps and its chain.
 *
 * Return: 0 on success, negative errno on failure.
 */
int masq_gc(const char *network, const struct cni_attachment *valid, size_t n,
	    struct cni_err *err);
