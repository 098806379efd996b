/* nv-ipam: allocating from this node's IPPool/CIDRPool blocks, without a daemon */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "ipam/nv-ipam/plugin/config.h"
#include "ipam/nv-ipam/plugin/nvipam.h"
#include "ipam/nv-ipam/plugin/result.h"
#include "ipam/nv-ipam/pool/allocator.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/store/store.h"

/* Everything one invocation works with, released in one place. */
struct session {
	struct nvipam_config *conf;
	struct nvipam_pools pools;
	struct nvipam_store *store;
};

static void session_close(struct session *s)
{
	nvipam_store_close(s->store);
	nvipam_pools_free(&s->pools);
	free(s->conf);
}

/* What a command opens beside its config. DEL opens nothing more: it visits the store
 * pool by pool. */
enum session_kind {
	SESSION_POOLS,       /* the network's pool file entries, their pools in the store: ADD, STATUS */
	SESSION_STORE_POOLS, /* the network's pools in the store: CHECK */
	SESSION_WHOLE,       /* the whole store: GC */
	SESSION_CONFIG_ONLY, /* DEL */
};

static int session_open(const struct cni_ctx *ctx, enum session_kind kind, struct session *s,
			struct cni_err *err)
{
	const char *keys[NVIPAM_MAX_POOLS];
	bool store_scope = kind == SESSION_WHOLE || kind == SESSION_CONFIG_ONLY;
	int r;

	*s = (struct session){ 0 };
	r = nvipam_config_load(ctx, store_scope ? NVIPAM_CONFIG_STORE : NVIPAM_CONFIG_FULL, &s->conf,
			       err);
	if (r < 0)
		return r;
	r = cni_plugin_setup_logging("nv-ipam", s->conf->log_file, s->conf->log_file_node,
				     s->conf->log_level,
				     ctx->env.command, err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->conf->n_pools; i++)
		keys[i] = s->conf->pool_keys[i];
	if (kind == SESSION_POOLS) {
		/* Only this network's entries: another pool's bad one is not this ADD's failure. */
		r = nvipam_pools_load_some(s->conf->pool_file, true, keys, s->conf->n_pools, &s->pools,
					   err);
		if (r < 0)
			return r;
	}
	if (kind == SESSION_CONFIG_ONLY)
		return 0;
	if (kind == SESSION_WHOLE)
		return nvipam_store_open(s->conf->store_file, true, s->conf->lock_timeout_ms, &s->store,
					 err);
	/* Only this network's pools are locked: the other rails' ADDs go on meanwhile. */
	return nvipam_store_open_pools(s->conf->store_file, true, s->conf->lock_timeout_ms, keys,
				       s->conf->n_pools, &s->store, err);
}

static const struct nvipam_pool *find_pool(const struct session *s, size_t i, struct cni_err *err)
{
	const struct nvipam_pool *p = nvipam_pools_find(&s->pools, s->conf->pool_keys[i]);

	/* The reference's words, then what the node has: the fix is one of those names. */
	if (!p)
		cni_err_set(err, CNI_ERR_POOL_NOT_FOUND, -ENOENT,
			    "configuration for pool \"%s\", poolType \"%s\" not found in %s%s; this "
			    "node's pools: %s", s->conf->pool_names[i],
			    nvipam_pool_type_name(s->conf->pool_type), s->conf->pool_file,
			    s->conf->pool_from_name ? " (the network's name: the config gives no poolName)" : "",
			    s->pools.names[0] ? s->pools.names :
			    "none (the controller has given this node no block of any pool yet)");
	return p;
}

/* The reference hands each pool the first requested static IP inside its subnet. */
static int assign_static(const struct session *s, const struct nvipam_pool **pools,
			 struct nvipam_request *reqs, struct cni_err *err)
{
	bool used[ARRAY_SIZE(s->conf->static_ips)] = { false };

	for (size_t i = 0; i < s->conf->n_pools; i++) {
		for (size_t k = 0; k < s->conf->n_static_ips; k++) {
			if (used[k] || !ip_prefix_contains(&pools[i]->subnet, &s->conf->static_ips[k]))
				continue;
			reqs[i] = (struct nvipam_request){ .kind = NVIPAM_REQ_STATIC,
							   .ip = s->conf->static_ips[k] };
			used[k] = true;
			break;
		}
	}
	for (size_t k = 0; k < s->conf->n_static_ips; k++) {
		char buf[IP_PREFIX_STRLEN];

		if (!used[k])
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "not all requested static IPs can be allocated from the ranges "
					   "available on the node, ip %s has no matching Pool",
					   ip_addr_format(&s->conf->static_ips[k], buf, sizeof(buf)));
	}
	return 0;
}

/*
 * Round robin with a cooldown: the addresses released less than releasedIPCooldownSeconds
 * ago count as held, unless nothing else is free (then round robin picks as without).
 * Return: 0 with *@ret, -ENOSPC when the cooling addresses are all that is free, or as
 * nvipam_allocate().
 */
static int allocate_cooled(struct session *s, const struct nvipam_pool *pool,
			   const struct nvipam_pool_usage *usage, const struct nvipam_request *req,
			   struct ip_addr *ret, struct cni_err *err)
{
	_cleanup_free_ struct ip_addr *cooling = NULL, *all = NULL;
	struct nvipam_pool_usage u = *usage;
	struct cni_err ignored = { 0 };
	size_t n = 0;
	int r;

	r = nvipam_store_cooling(s->store, pool->key, s->conf->released_ip_cooldown_s, &cooling, &n);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	if (!n)
		return -ENOSPC;
	all = malloc((usage->n_reserved + n) * sizeof(*all));
	if (!all)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	/* Both in address order: merged, as the allocator takes them. */
	for (size_t i = 0, j = 0, k = 0; k < usage->n_reserved + n; k++)
		all[k] = j >= n || (i < usage->n_reserved &&
				    ip_addr_cmp(&usage->reserved[i], &cooling[j]) <= 0) ?
				 usage->reserved[i++] : cooling[j++];
	u.reserved = all;
	u.n_reserved += n;
	r = nvipam_allocate(pool, &u, req, ret, &ignored);
	return r == -ENOSPC ? r : r < 0 ? cni_err_set(err, ignored.code, r, "%s", ignored.msg) : 0;
}

static int allocate_one(struct session *s, const struct cni_ctx *ctx, const struct nvipam_pool *pool,
			const struct nvipam_request *req, struct ip_addr *ret, struct cni_err *err)
{
	_cleanup_(nvipam_store_usage_free) struct nvipam_pool_usage usage = { 0 };
	struct nvipam_alloc a;
	int r;

	r = nvipam_store_usage_lookup(s->store, pool->key, &usage);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	r = -ENOSPC;
	if (req->kind == NVIPAM_REQ_NEXT && s->conf->released_ip_cooldown_s)
		r = allocate_cooled(s, pool, &usage, req, ret, err);
	if (r == -ENOSPC)
		r = nvipam_allocate(pool, &usage, req, ret, err);
	if (r < 0)
		return r;
	a = (struct nvipam_alloc){
		.pool = pool->key,
		.ip = *ret,
		.container_id = ctx->env.container_id,
		.ifname = ctx->env.ifname,
		.network = ctx->conf.name,
		.pod_namespace = s->conf->pod_namespace,
		.pod_name = s->conf->pod_name,
		.pod_uid = s->conf->pod_uid,
		.device_id = s->conf->device_id,
		.created = time(NULL),
	};
	r = nvipam_store_add(s->store, &a, req->kind == NVIPAM_REQ_NEXT);
	if (r == -EEXIST)
		return cni_err_set(err, CNI_ERR_ADDRESS_TAKEN, r, "IP is already reserved in the pool \"%s\"",
				   pool->name);
	if (r == -E2BIG)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "the attachment's container ID, network name and pod are too long to "
				   "record in the store");
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	return 0;
}

/*
 * After a handover the reference daemon keys each allocation "<container>_<ifname>": two
 * attachments of one key would be one entry to it, and its DEL of either would free the
 * other's address. Refused here rather than refusing '_', which Multus interface names
 * and hand-chosen container IDs use; runtimes' IDs are hex and never meet this.
 */
static int check_key(struct session *s, const struct cni_ctx *ctx, const struct nvipam_pool *pool,
		     struct cni_err *err)
{
	const struct nvipam_alloc *m = nvipam_store_find_key(s->store, pool->key,
							      ctx->env.container_id, ctx->env.ifname);
	char ip[IP_PREFIX_STRLEN];

	if (!m)
		return 0;
	return cni_err_set(err, CNI_ERR_INVALID_ENV, -EEXIST,
			   "container ID \"%s\" with interface \"%s\" has the key \"%s_%s\" of the "
			   "attachment of container \"%s\", interface \"%s\" (IP %s in pool \"%s\"): "
			   "the reference nv-ipam node daemon's store, which a handover writes, keys "
			   "allocations \"<container>_<interface>\" and could not tell them apart",
			   ctx->env.container_id, ctx->env.ifname, ctx->env.container_id,
			   ctx->env.ifname, m->container_id, m->ifname,
			   ip_addr_format(&m->ip, ip, sizeof(ip)), pool->name);
}

/*
 * A pod has one sandbox at a time: what its previous sandbox holds in the pool (a runtime
 * that lost it without a DEL; a crash between teardown steps) is this one's, or the pod's
 * address would stay held until the pod is deleted, and a static IP would be refused for
 * good. Released here, in the same commit (every earlier sandbox's, should a store hold
 * more than one); a round-robin request takes back the latest one's address (when the
 * subnet still holds it), any other request is allocated as asked.
 */
static void take_over(struct session *s, const struct cni_ctx *ctx, const struct nvipam_pool *pool,
		      struct nvipam_request *req)
{
	const struct nvipam_alloc *prev;
	struct ip_addr ip = { 0 };
	char buf[IP_PREFIX_STRLEN];
	time_t latest = 0;
	bool found = false;

	while ((prev = nvipam_store_find_pod(s->store, pool->key, s->conf->pod_uid,
					     ctx->env.ifname, ctx->env.container_id))) {
		/* Its strings stay valid until the store is closed. */
		const char *old = prev->container_id;

		if (!found || prev->created >= latest) {
			ip = prev->ip;
			latest = prev->created;
		}
		found = true;
		log_info("ADD %s/%s: pod %s/%s (uid %s) had %s in pool %s under container %s, a "
			 "sandbox replaced without a DEL: taken over", ctx->env.container_id,
			 ctx->env.ifname, s->conf->pod_namespace, s->conf->pod_name, s->conf->pod_uid,
			 ip_addr_format(&prev->ip, buf, sizeof(buf)), pool->key, old);
		if (nvipam_store_remove(s->store, pool->key, old, ctx->env.ifname) == 0)
			break;
	}
	if (found && req->kind == NVIPAM_REQ_NEXT && ip_prefix_contains(&pool->subnet, &ip))
		*req = (struct nvipam_request){ .kind = NVIPAM_REQ_STATIC, .ip = ip };
}

/*
 * A commit that failed may have left its lines in the logs, where every other process
 * reads them (a sync that failed after the write, a directory that could not be synced
 * after a log was replaced): released as DEL would, so that an ADD that failed holds
 * nothing. Its own failure is logged; the ADD's error is the one that counts.
 */
static void add_undo(const struct session *s, const struct cni_ctx *ctx)
{
	struct cni_err e = { 0 };
	size_t n = 0;

	if (nvipam_store_release(s->conf->store_file, true, s->conf->lock_timeout_ms,
				 ctx->env.container_id, ctx->env.ifname, 0, &n, &e) < 0)
		log_error("ADD %s/%s: releasing what the failed commit wrote failed: %s",
			  ctx->env.container_id, ctx->env.ifname, e.msg);
	else if (n)
		log_warning("ADD %s/%s: the commit failed: %zu address(es) it wrote released",
			    ctx->env.container_id, ctx->env.ifname, n);
}

static int nvipam_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	struct session s;
	const struct nvipam_pool *pools[NVIPAM_MAX_POOLS];
	struct nvipam_request reqs[NVIPAM_MAX_POOLS];
	struct ip_addr ips[NVIPAM_MAX_POOLS];
	int r;

	r = session_open(ctx, SESSION_POOLS, &s, err);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < s.conf->n_pools; i++) {
		pools[i] = find_pool(&s, i, err);
		if (!pools[i]) {
			r = -ENOENT;
			goto out;
		}
		reqs[i] = (struct nvipam_request){ .kind = NVIPAM_REQ_NEXT };
		if (s.conf->allocate_default_gateway)
			reqs[i].kind = NVIPAM_REQ_GATEWAY;
		else if (s.conf->has_index)
			reqs[i] = (struct nvipam_request){ .kind = NVIPAM_REQ_INDEX, .index = s.conf->index };
	}
	r = assign_static(&s, pools, reqs, err);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < s.conf->n_pools; i++) {
		const struct nvipam_alloc *have = nvipam_store_find(s.store, pools[i]->key,
								    ctx->env.container_id, ctx->env.ifname);

		/* A repeated ADD (a runtime retry) gets what the first one reserved. */
		if (have) {
			ips[i] = have->ip;
			continue;
		}
		r = check_key(&s, ctx, pools[i], err);
		if (r < 0)
			goto out;
		take_over(&s, ctx, pools[i], &reqs[i]);
		r = allocate_one(&s, ctx, pools[i], &reqs[i], &ips[i], err);
		if (r < 0)
			goto out;
	}
	/* Built before the commit: once the addresses are on disk, nothing may fail. */
	for (size_t i = 0; i < s.conf->n_pools && r >= 0; i++)
		r = nvipam_result_add_pool(pools[i], &ips[i], s.conf->allocate_default_gateway, ret);
	if (r < 0) {
		cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
		goto out;
	}
	/* Nothing reaches the disk before every pool has an address: all or nothing. */
	r = nvipam_store_commit_close(TAKE_PTR(s.store), err);
	if (r < 0) {
		add_undo(&s, ctx);
		goto out;
	}
	for (size_t i = 0; i < s.conf->n_pools; i++) {
		char buf[IP_PREFIX_STRLEN];

		log_info("ADD %s/%s: %s from pool %s", ctx->env.container_id, ctx->env.ifname,
			 ip_addr_format(&ips[i], buf, sizeof(buf)), pools[i]->key);
	}
out:
	session_close(&s);
	return r;
}

static int nvipam_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct session s;
	size_t n = 0;
	int r;

	r = session_open(ctx, SESSION_CONFIG_ONLY, &s, err);
	if (r >= 0)
		/* By attachment in every pool: a pool renamed or dropped since ADD is released too. */
		r = nvipam_store_release(s.conf->store_file, true, s.conf->lock_timeout_ms,
					 ctx->env.container_id, ctx->env.ifname,
					 s.conf->released_ip_cooldown_s, &n, err);
	/* A store it cannot reach (the node's settings refuse its path) is an error: the
	 * runtime retries a failed DEL, and an address released by no one is held forever. */
	if (r >= 0) {
		log_info("DEL %s/%s: %zu address(es) released", ctx->env.container_id, ctx->env.ifname, n);
	}
	session_close(&s);
	return r;
}

static bool prev_has_ip(const struct cni_result *prev, const struct ip_addr *ip)
{
	for (size_t i = 0; prev && i < prev->n_ips; i++)
		if (ip_addr_equal(&prev->ips[i].address.addr, ip))
			return true;
	return false;
}

static int nvipam_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct session s;
	int r;

	r = session_open(ctx, SESSION_STORE_POOLS, &s, err);
	for (size_t i = 0; r >= 0 && i < s.conf->n_pools; i++) {
		const struct nvipam_alloc *a = nvipam_store_find(s.store, s.conf->pool_keys[i],
								 ctx->env.container_id, ctx->env.ifname);
		char buf[IP_PREFIX_STRLEN];

		if (!a)
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
					"no allocation for container %s, interface %s in pool \"%s\"",
					ctx->env.container_id, ctx->env.ifname, s.conf->pool_names[i]);
		else if (ctx->conf.prev_result && !prev_has_ip(ctx->conf.prev_result, &a->ip))
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
					"allocation %s in pool \"%s\" is not in prevResult",
					ip_addr_format(&a->ip, buf, sizeof(buf)), s.conf->pool_names[i]);
	}
	session_close(&s);
	return r;
}

static bool attachment_valid(const struct cni_attachment *valid, size_t n, const struct nvipam_alloc *a)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(valid[i].container_id, a->container_id) == 0 &&
		    strcmp(valid[i].ifname, a->ifname) == 0)
			return true;
	return false;
}

static int nvipam_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_attachment *valid = NULL;
	struct session s;
	size_t n_valid = 0, released = 0, n;
	int r;

	r = cni_conf_gc_attachments(&ctx->conf, &valid, &n_valid, err);
	if (r < 0)
		return r;
	if (r == 0) {
		/* Without the list nothing can be told stale; releasing all would be worse. */
		log_warning("GC without cni.dev/valid-attachments: nothing released");
		return 0;
	}
	r = session_open(ctx, SESSION_WHOLE, &s, err);
	for (size_t i = 0; r >= 0 && i < nvipam_store_count(s.store);) {
		const struct nvipam_alloc *a = nvipam_store_alloc_at(s.store, i);

		/* Other networks sharing the pool are not ours to judge. */
		if (strcmp(a->network, ctx->conf.name) != 0 || attachment_valid(valid, n_valid, a)) {
			i++;
			continue;
		}
		log_info("GC: releasing %s/%s in pool %s", a->container_id, a->ifname, a->pool);
		n = nvipam_store_remove(s.store, a->pool, a->container_id, a->ifname);
		/* Nothing removed is out of memory: the same allocation would come round again. */
		if (!n)
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		released += n;
	}
	if (r >= 0)
		r = nvipam_store_commit(s.store, err);
	if (r >= 0)
		log_info("GC %s: %zu allocation(s) released", ctx->conf.name, released);
	session_close(&s);
	cni_attachments_free(valid, n_valid);
	return r;
}

static int nvipam_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct session s;
	int r;

	r = session_open(ctx, SESSION_POOLS, &s, err);
	if (r < 0) {
		/* STATUS speaks in 50: the reason is kept in the message. */
		if (err->code != CNI_ERR_TRY_AGAIN)
			cni_err_code(err, CNI_ERR_STATUS_UNAVAILABLE, r);
		goto out;
	}
	for (size_t i = 0; i < s.conf->n_pools; i++) {
		_cleanup_(nvipam_store_usage_free) struct nvipam_pool_usage usage = { 0 };
		const struct nvipam_pool *p = find_pool(&s, i, err);

		if (!p) {
			r = cni_err_code(err, CNI_ERR_STATUS_UNAVAILABLE, -ENOENT);
			goto out;
		}
		r = nvipam_store_usage(s.store, p->key, &usage);
		if (r < 0) {
			cni_err_set(err, CNI_ERR_STATUS_UNAVAILABLE, r, "out of memory");
			goto out;
		}
		if (nvipam_pool_free_count(p, &usage) == 0) {
			r = cni_err_set(err, CNI_ERR_STATUS_UNAVAILABLE, -ENOSPC,
					"no free addresses in the pool \"%s\", poolType \"%s\"", p->name,
					nvipam_pool_type_name(p->type));
			goto out;
		}
	}
out:
	session_close(&s);
	return r;
}

const struct cni_plugin nvipam_plugin = {
	.name = "nv-ipam",
	.summary = "nv-ipam: addresses from this node's IPPool/CIDRPool blocks, in a file-locked store",
	.keys = nvipam_config_keys,
	/* Logging set up once, from the ipam section and nv-ipam.conf: never from the
	 * interface plugin's logFile. */
	.ipam = true,
	.about_state = NVIPAM_STORE_FORMATS,
	.add = nvipam_add,
	.del = nvipam_del,
	.check = nvipam_check,
	.status = nvipam_status,
	.gc = nvipam_gc,
};
