/* nftables through nfnetlink: tables, chains and rules changed in one atomic batch */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cni_err;
struct nft_rule;

/*
 * Families as nft names them; the values are the kernel's NFPROTO_* numbers
 * (the nfgenmsg family of every message).
 */
enum nft_family {
	NFT_FAMILY_INET = 1, /* NFPROTO_INET: both IPv4 and IPv6 */
	NFT_FAMILY_IP = 2,   /* NFPROTO_IPV4 */
	NFT_FAMILY_BRIDGE = 7, /* NFPROTO_BRIDGE: frames a bridge forwards */
	NFT_FAMILY_IP6 = 10, /* NFPROTO_IPV6 */
};

/* A base chain's hooks, the kernel's NF_INET_* numbers. */
enum nft_hook {
	NFT_HOOK_PREROUTING = 0,
	NFT_HOOK_INPUT = 1,
	NFT_HOOK_FORWARD = 2,
	NFT_HOOK_OUTPUT = 3,
	NFT_HOOK_POSTROUTING = 4,
};

/* The priorities nft names (dstnat, srcnat, filter). */
#define NFT_PRIORITY_DSTNAT (-100)
#define NFT_PRIORITY_FILTER 0
#define NFT_PRIORITY_SRCNAT 100
/* In a bridge table nft's dstnat is -300. */
#define NFT_PRIORITY_BRIDGE_DSTNAT (-300)

/* The longest comment nft keeps (its userdata TLV holds a byte of length, the NUL included). */
#define NFT_COMMENT_MAX 254

/* A base chain's policy; none given is the kernel's, accept. */
enum nft_policy {
	NFT_POLICY_NONE = 0,
	NFT_POLICY_ACCEPT,
	NFT_POLICY_DROP,
};

/* A chain: a regular one when @type is NULL, a base chain on a hook otherwise. */
struct nft_chain_spec {
	const char *name;
	const char *type;      /* "nat", "filter", "route"; NULL for a regular chain */
	enum nft_hook hook;
	int priority;
	enum nft_policy policy; /* a base chain's only */
	const char *comment;   /* NULL for none */
};

struct nft_batch;

/**
 * nft_batch_new() - start a transaction: changes collected here reach the kernel together
 * @ret: the batch, written only on success; release with nft_batch_free()
 *
 * Return: 0 on success, -ENOMEM.
 */
int nft_batch_new(struct nft_batch **ret);

/**
 * nft_batch_free() - release a batch (committed or not), and close the socket of its commit
 * @b: batch, may be NULL
 *
 * Closing the socket a change was sent on makes the kernel finish freeing the
 * transaction, which waits for an RCU grace period (milliseconds): a caller with other
 * work to do after the commit does it first, while the kernel waits, and frees the
 * batch last.
 */
void nft_batch_free(struct nft_batch *b);

/**
 * nft_batch_add_table() - "add table": create it unless it exists
 * @b: batch
 * @family: the table's family
 * @name: the table
 * @comment: its comment, NULL for none (an existing table keeps its own)
 *
 * Return: 0 on success, -EINVAL for a name or comment nft would refuse, -ENOMEM.
 */
int nft_batch_add_table(struct nft_batch *b, enum nft_family family, const char *name,
			const char *comment);

/**
 * nft_batch_delete_table() - "delete table", with everything it holds
 * @b: batch
 * @family: the table's family
 * @name: the table (a missing one fails the batch with -ENOENT)
 *
 * Return: 0 on success, -EINVAL, -ENOMEM.
 */
int nft_batch_delete_table(struct nft_batch *b, enum nft_family family, const char *name);

/**
 * nft_batch_add_chain() - "add chain": create it unless it exists
 * @b: batch
 * @family: the table's family
 * @table: the table
 * @c: the chain
 *
 * Return: 0 on success, -EINVAL, -ENOMEM.
 */
int nft_batch_add_chain(struct nft_batch *b, enum nft_family family, const char *table,
			const struct nft_chain_spec *c);

/**
 * nft_batch_flush_chain() - "flush chain": remove every rule of a chain
 * @b: batch
 * @family: the table's family
 * @table: the table
 * @chain: the chain (a missing one fails the batch with -ENOENT)
 *
 * Return: 0 on success, -EINVAL, -ENOMEM.
 */
int nft_batch_flush_chain(struct nft_batch *b, enum nft_family family, const char *table,
			  const char *chain);

/**
 * nft_batch_delete_chain() - "delete chain" (it must hold no rule and no jump to it may remain)
 * @b: batch
 * @family: the table's family
 * @table: the table
 * @chain: the chain
 *
 * Return: 0 on success, -EINVAL, -ENOMEM.
 */
int nft_batch_delete_chain(struct nft_batch *b, enum nft_family family, const char *table,
			   const char *chain);

/**
 * nft_batch_add_rule() - "add rule": append a rule to a chain
 * @b: batch
 * @table: the table (of the rule's family, nft_rule_new())
 * @chain: the chain
 * @r: the rule (copied: it may be freed or reused after)
 *
 * Return: 0 on success, -EINVAL, -ENOMEM.
 */
int nft_batch_add_rule(struct nft_batch *b, const char *table, const char *chain,
		       const struct nft_rule *r);

/**
 * nft_batch_delete_rule() - "delete rule ... handle N"
 * @b: batch
 * @family: the table's family
 * @table: the table
 * @chain: the chain
 * @handle: the rule's handle, from nft_list_rules()
 *
 * Return: 0 on success, -EINVAL, -ENOMEM.
 */
int nft_batch_delete_rule(struct nft_batch *b, enum nft_family family, const char *table,
			  const char *chain, uint64_t handle);

/**
 * nft_batch_commit() - send a batch to the kernel of the caller's netns: all of its
 *                      changes take effect, or none
 * @b: batch (an empty one sends nothing)
 * @err: code 100 naming the change the kernel refused, its text as details
 *
 * Return: 0 on success, the kernel's negative errno (-ENOENT for a missing table or
 * chain, -EEXIST, -EBUSY for a chain still in use), negative errno otherwise.
 */
int nft_batch_commit(struct nft_batch *b, struct cni_err *err);
