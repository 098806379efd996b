/* portmap's nftables backend: upstream's cni_hostport tables, one rule per mapping */
#pragma once

struct cni_err;
struct nft_batch;
struct portmap_conf;

/* Upstream's names: a node moved between the reference and ours finds its rules. */
#define PORTMAP_NFT_TABLE "cni_hostport"

/**
 * portmap_nft_add() - the container's DNAT and masquerade rules, both families in one batch
 * @c: config (its addresses from prevResult)
 * @cid: the container ID, each rule's comment
 * @ret: the batch, committed, written only on success: freed (nft_batch_free()) once the
 *       rest of the ADD is done, which the kernel's freeing of the transaction then
 *       does not hold up
 * @err: code 7 for a condition not read, 100 for the kernel's refusal
 *
 * The table, its chains and the jumps are made or renewed as upstream's transaction
 * does; the batch is applied whole or not at all.
 *
 * Return: 0 on success, negative errno on failure (nothing changed).
 */
int portmap_nft_add(const struct portmap_conf *c, const char *cid, struct nft_batch **ret,
		    struct cni_err *err);

/**
 * portmap_nft_check() - whether the container's rules are there, counted as upstream counts
 * @c: config
 * @cid: the container ID
 * @err: code 103 naming the chain short of rules, 100 when the kernel cannot be asked
 *
 * Return: 0 when they are, negative errno otherwise.
 */
int portmap_nft_check(const struct portmap_conf *c, const char *cid, struct cni_err *err);

/**
 * portmap_nft_del() - delete every rule of a container (by its comment), IPv4 and IPv6
 * @cid: the container ID
 * @err: code 100 when the kernel refuses
 *
 * Return: 0 when none is left (a missing table or chain holds none), negative errno otherwise.
 */
int portmap_nft_del(const char *cid, struct cni_err *err);

/**
 * portmap_nft_usable() - whether the kernel speaks nftables to this process
 * @err: code 100 saying why not
 *
 * Return: 1 when it does, 0 when not (@err filled), negative errno for another failure.
 */
int portmap_nft_usable(struct cni_err *err);
