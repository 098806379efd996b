/* sbr network config: table, gateways, addSourceHints; the interface's addresses in prevResult */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/util/ipaddr.h"

struct cni_ctx;
struct cni_err;
struct cni_ip;
struct cni_result;

/* Tables are numbered from here on when the config names none, as the reference does. */
#define SBR_FIRST_TABLE 100

struct sbr_conf {
	bool has_table;        /* "table": rules only, to that table */
	uint32_t table;
	bool has_gw4;          /* "gateways": at most one per family */
	struct ip_addr gw4;
	bool has_gw6;
	struct ip_addr gw6;
	bool add_source_hints; /* "addSourceHints" */
};

/**
 * sbr_config_load() - read and validate the plugin's fields of the network config
 * @ctx: context
 * @ret: config, written only on success
 * @err: code 6 for a wrong type, 7 for a bad value
 *
 * Return: 0 on success, negative errno on failure.
 */
int sbr_config_load(const struct cni_ctx *ctx, struct sbr_conf *ret, struct cni_err *err);

/**
 * sbr_config_addresses() - the addresses of prevResult that belong to an interface
 * @prev: prevResult, NULL when the config has none
 * @ifname: the interface (CNI_IFNAME)
 * @ret: malloc'ed array of pointers into @prev, written only on success
 * @ret_n: number of entries, at least one
 * @err: code 7 without prevResult, without addresses, or with none of @ifname's
 *
 * An address without an "interface" counts as the interface's, as in the
 * reference (one out of range never gets here: the result parser refuses it).
 *
 * Return: 0 on success, negative errno on failure.
 */
int sbr_config_addresses(const struct cni_result *prev, const char *ifname,
			 const struct cni_ip ***ret, size_t *ret_n, struct cni_err *err);

/* The keys the plugin reads, for cni_conf_keys_warn(). */
extern const struct cni_conf_keys sbr_config_keys[];
