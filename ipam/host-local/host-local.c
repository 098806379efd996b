/* host-local IPAM plugin: addresses from ranges, held in a directory of files on the node */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/conf.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "ipam/host-local/allocator.h"
#include "ipam/host-local/config.h"
#include "ipam/host-local/dns.h"
#include "ipam/host-local/host-local.h"
#include "ipam/host-local/ip.h"
#include "ipam/host-local/range.h"
#include "ipam/host-local/store.h"

/* An IPAM plugin logs where its own section says: the top-level logFile is the interface plugin's. */
static int setup_logging(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *file = NULL, *level = NULL;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "ipam.logFile", &file, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "ipam.logLevel", &level, err)) < 0)
		return r;
	return cni_plugin_setup_logging("host-local", file, false, level, ctx->env.command, err);
}

static int load(const struct cni_ctx *ctx, struct hl_config *ret, struct cni_err *err)
{
	int r = setup_logging(ctx, err);

	return r < 0 ? r : hl_config_load(&ctx->conf, &ctx->args, ret, err);
}

static int disk_reserve(void *store, const char *id, const char *ifname, const struct ip_addr *ip,
			size_t set, bool *ret_reserved, struct cni_err *err)
{
	return hl_store_reserve(store, id, ifname, ip, set, ret_reserved, err);
}

static bool disk_last_reserved(void *store, size_t set, struct ip_addr *ret)
{
	return hl_store_last_reserved(store, set, ret);
}

static bool disk_owned_in(void *store, const char *id, const char *ifname,
			  const struct hl_range_set *set, struct ip_addr *ret)
{
	return hl_store_owned_in(store, id, ifname, set, ret);
}

static const struct hl_store_ops disk_ops = {
	.reserve = disk_reserve,
	.last_reserved = disk_last_reserved,
	.owned_in = disk_owned_in,
};

/* The first requested address a set holds that no earlier set took. */
static const struct ip_addr *requested_in(const struct hl_config *c, const struct hl_range_set *set,
					  bool *used)
{
	for (size_t i = 0; i < c->n_requested; i++) {
		if (used[i] || !hl_range_set_find(set, &c->requested[i]))
			continue;
		used[i] = true;
		return &c->requested[i];
	}
	return NULL;
}

static int unfulfilled(const struct hl_config *c, const bool *used, struct cni_err *err)
{
	char list[1024], ip[HL_IP_STRLEN];
	size_t o = 0;

	list[0] = '\0';
	for (size_t i = 0; i < c->n_requested && o < sizeof(list); i++)
		if (!used[i])
			o += (size_t)snprintf(list + o, sizeof(list) - o, " %s",
					      hl_ip_format(&c->requested[i], ip));
	if (!o)
		return 0;
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "failed to allocate all requested IPs:%s", list);
}

/* Each set's address into @res; on failure what was reserved goes back. */
static int allocate(const struct cni_ctx *ctx, const struct hl_config *c, struct hl_store *s,
		    struct cni_result *res, struct cni_err *err)
{
	_cleanup_free_ bool *used = calloc(c->n_requested + 1, sizeof(*used));
	struct cni_ip ip;
	int r = 0;

	if (!used)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < c->n_sets && r >= 0; i++) {
		r = hl_alloc_get(&disk_ops, s, &c->sets[i], i, ctx->env.container_id, ctx->env.ifname,
				 requested_in(c, &c->sets[i], used), &ip, err);
		if (r < 0)
			r = cni_err_prefix(err, r, "failed to allocate for range %zu", i);
		else if (cni_result_add_ip(res, &ip) < 0)
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	if (r >= 0)
		r = unfulfilled(c, used, err);
	if (r < 0)
		hl_store_undo(s);
	return r;
}

static int host_local_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct cni_result res = { 0 };
	struct hl_store *s = NULL;
	struct hl_config c = { 0 };
	char text[IP_PREFIX_STRLEN];
	int r;

	if ((r = load(ctx, &c, err)) < 0)
		return r;
	if ((c.resolv_conf && (r = hl_dns_load(c.resolv_conf, &res.dns, err)) < 0) ||
	    (r = hl_store_open(c.data_dir, c.name, true, &s, err)) < 0 ||
	    (r = allocate(ctx, &c, s, &res, err)) < 0)
		goto out;
	for (size_t i = 0; i < c.n_routes && r >= 0; i++)
		if (cni_result_add_route(&res, &c.routes[i]) < 0)
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (r < 0) {
		hl_store_undo(s);
		goto out;
	}
	for (size_t i = 0; i < res.n_ips; i++)
		log_info("ADD %s/%s: %s in network %s", ctx->env.container_id, ctx->env.ifname,
			 ip_prefix_format(&res.ips[i].address, text, sizeof(text)), c.name);
	*ret = res;
	res = (struct cni_result){ 0 };
out:
	hl_store_close(s);
	cni_result_free(&res);
	hl_config_free(&c);
	return r;
}

static int host_local_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct hl_store *s = NULL;
	struct hl_config c = { 0 };
	size_t n = 0;
	int r;

	if ((r = load(ctx, &c, err)) < 0)
		return r;
	/* A store that was never made holds nothing: DEL makes none. */
	if ((r = hl_store_open(c.data_dir, c.name, false, &s, err)) >= 0 &&
	    (r = hl_store_release(s, ctx->env.container_id, ctx->env.ifname, c.n_sets, &n, err)) >= 0)
		log_info("DEL %s/%s: %zu address(es) released in network %s", ctx->env.container_id,
			 ctx->env.ifname, n, c.name);
	hl_store_close(s);
	hl_config_free(&c);
	return r;
}

/* Upstream's CHECK: the attachment holds some address of the network, whichever. */
static int host_local_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct hl_store *s = NULL;
	struct hl_config c = { 0 };
	int r;

	if ((r = load(ctx, &c, err)) < 0)
		return r;
	r = hl_store_open(c.data_dir, c.name, false, &s, err);
	if (r >= 0 && !(s && hl_store_find(s, ctx->env.container_id, ctx->env.ifname)))
		r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
				"host-local: Failed to find address added by container %s",
				ctx->env.container_id);
	hl_store_close(s);
	hl_config_free(&c);
	return r;
}

static int host_local_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_attachment *valid = NULL;
	struct hl_store *s = NULL;
	struct hl_config c = { 0 };
	size_t n_valid = 0, n = 0;
	int r;

	if ((r = load(ctx, &c, err)) < 0)
		return r;
	r = cni_conf_gc_attachments(&ctx->conf, &valid, &n_valid, err);
	if (r == 0)
		/* Without the list nothing can be told stale; releasing all would be worse. */
		log_warning("GC without cni.dev/valid-attachments: nothing released");
	if (r > 0 && (r = hl_store_open(c.data_dir, c.name, false, &s, err)) >= 0 &&
	    (r = hl_store_gc(s, valid, n_valid, &n, err)) >= 0)
		log_info("GC %s: %zu address(es) released", c.name, n);
	hl_store_close(s);
	cni_attachments_free(valid, n_valid);
	hl_config_free(&c);
	return r < 0 ? r : 0;
}

/* Ready when the store can be reached and every range set has an address free. */
static int host_local_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	char set_text[512];
	struct hl_store *s = NULL;
	struct hl_config c = { 0 };
	int r;

	if ((r = load(ctx, &c, err)) < 0)
		return r;
	r = hl_store_open(c.data_dir, c.name, false, &s, err);
	/* STATUS speaks in 50: the reason is kept in the message. */
	if (r < 0 && err->code != CNI_ERR_TRY_AGAIN)
		cni_err_code(err, CNI_ERR_STATUS_UNAVAILABLE, r);
	for (size_t i = 0; r >= 0 && i < c.n_sets; i++)
		if (hl_store_count_in(s, &c.sets[i]) >= hl_range_set_capacity(&c.sets[i]))
			r = cni_err_set(err, CNI_ERR_STATUS_UNAVAILABLE, -ENOSPC,
					"no IP addresses available in range set: %s",
					hl_range_set_format(&c.sets[i], set_text, sizeof(set_text)));
	hl_store_close(s);
	hl_config_free(&c);
	return r;
}

const struct cni_plugin host_local_plugin = {
	.name = "host-local",
	.summary = "host-local: addresses from the config's ranges, held in files on this node",
	.ipam = true,
	.keys = host_local_config_keys,
	.about_state = "store: a directory per network below dataDir (default " HL_DEFAULT_DATA_DIR
		       "), a file per address, as containernetworking/plugins v1.9.1 keeps it",
	.add = host_local_add,
	.del = host_local_del,
	.check = host_local_check,
	.status = host_local_status,
	.gc = host_local_gc,
};
