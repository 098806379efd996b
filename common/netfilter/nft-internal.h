/* nftables: what nft.c and nft-rule.c share about a rule under construction */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/netfilter/nft.h"

struct nl_msg;

struct nft_rule {
	enum nft_family family;
	struct nl_msg *exprs;  /* only attributes: the NFTA_LIST_ELEMs, in order */
	char comment[NFT_COMMENT_MAX + 1];
	bool has_comment;
	int nfproto;           /* the family "meta nfproto" was matched against, 0 for none */
	uint8_t l4proto;       /* the protocol "meta l4proto" was matched against, 0 for none */
};

/**
 * nft_udata_comment() - a comment as nft keeps it in userdata: one TLV of type 0
 *                       (the table's, chain's and rule's comment), its NUL included
 * @comment: at most NFT_COMMENT_MAX bytes
 * @buf: output, at least NFT_COMMENT_MAX + 3 bytes
 *
 * Return: the TLV's length.
 */
size_t nft_udata_comment(const char *comment, uint8_t *buf);
