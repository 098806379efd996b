/* nftables listing: the rules a table's chains hold, found by the comment they carry */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/netfilter/nft.h"

struct cni_err;

struct nft_rule_info {
	uint64_t handle;  /* for nft_batch_delete_rule() */
	char *chain;
	char *comment;    /* NULL when the rule has none */
	char iifname[16]; /* what its first 'iifname "X"' match names, "" for none */
};

struct nft_rule_list {
	struct nft_rule_info *v;
	size_t n;
};

/**
 * nft_list_rules() - the rules of a chain (or of every chain of a table), in order
 * @family: the table's family
 * @table: the table
 * @chain: the chain, NULL for all of the table's
 * @ret: the rules, written only on success; release with nft_rule_list_free()
 * @err: code 100 when the kernel cannot be asked
 *
 * As knftables' ListRules, what a plugin needs to find its rules again: their handle
 * and comment, not their expressions.
 *
 * Return: 0 on success, -ENOENT (@err untouched) when the table or the chain does not
 * exist, negative errno otherwise.
 */
int nft_list_rules(enum nft_family family, const char *table, const char *chain,
		   struct nft_rule_list *ret, struct cni_err *err);

/**
 * nft_rule_list_free() - release a listing and zero it
 * @l: listing
 */
void nft_rule_list_free(struct nft_rule_list *l);

/**
 * nft_chain_exists() - whether a table has a chain (or whether the table exists)
 * @family: the table's family
 * @table: the table
 * @chain: the chain, NULL to ask about the table
 * @err: code 100 when the kernel cannot be asked
 *
 * Return: 1 when it exists, 0 when not, negative errno when it cannot be told.
 */
int nft_chain_exists(enum nft_family family, const char *table, const char *chain,
		     struct cni_err *err);
