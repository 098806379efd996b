/* tuning CNI meta plugin: sysctls and link attributes of a pod's interface, chained after it */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/attach/attach.h"
#include "common/cni/plugin.h"
#include "common/cni/result-copy.h"
#include "common/cni/result.h"
#include "common/net/link.h"
#include "common/net/linkattr.h"
#include "common/net/neterr.h"
#include "common/net/netsysctl.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "plugins/tuning/allowlist.h"
#include "plugins/tuning/config.h"
#include "plugins/tuning/state.h"
#include "plugins/tuning/tuning.h"

static int need_prev_result(const struct cni_ctx *ctx, struct cni_err *err)
{
	if (!ctx->conf.prev_result)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "Required prevResult missing: tuning runs chained after the plugin "
				   "that makes %s", ctx->env.ifname);
	return 0;
}

static int state_name(const struct cni_ctx *ctx, char *buf, size_t size, struct cni_err *err)
{
	if (tuning_state_name(ctx->env.container_id, ctx->env.ifname, buf, size) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
				   "container ID and interface name cannot name a state file");
	return 0;
}

static int find_link(struct net_ns *ns, const char *ifname, struct net_linkattr *ret,
		     struct cni_err *err)
{
	int r = net_linkattr_get(ns, ifname, ret);

	if (r == -ENODEV)
		return cni_err_set(err, CNI_ERR_NOT_FOUND, r, "Cannot find container link %s", ifname);
	if (r < 0)
		return net_err_op(err, r, "failed to read link", ifname);
	return 0;
}

/*
 * A sysctl the kernel lets one write but not read: net.ipv4.route.flush (mode 0200),
 * stable_secret before it is set (EIO). The reference writes it and reads nothing back.
 */
static bool write_only(int r)
{
	return r == -EACCES || r == -EIO;
}

static int sysctl_read_err(const struct tuning_sysctl *s, int r, struct cni_err *err)
{
	if (r == -ENOENT)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "sysctl %s: no /proc/sys/net/%s in the pod's netns", s->key, s->path);
	if (r == -EISDIR)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "invalid net sysctl key \"%.128s\": /proc/sys/net/%s is a directory, "
				   "not a sysctl", s->key, s->path);
	if (write_only(r))
		return cni_err_set(err, CNI_ERR_KERNEL, r,
				   "cannot read /proc/sys/net/%s: %s (the kernel lets this sysctl be "
				   "written, not read: there is no value to compare)", s->path,
				   strerror(-r));
	return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot read /proc/sys/net/%s: %s", s->path,
			   strerror(-r));
}

/* Back to what the state holds, in the reverse of ADD's order; the first error is returned. */
static int restore_link(struct net_ns *ns, int ifindex, const struct tuning_state *s)
{
	int r = 0, q;

	if (s->has_txqlen && (q = net_linkattr_set_txqlen(ns, ifindex, s->txqlen)) < 0 && !r)
		r = q;
	if (s->has_allmulti &&
	    (q = net_linkattr_set_flag(ns, ifindex, IFF_ALLMULTI, s->allmulti)) < 0 && !r)
		r = q;
	if (s->has_mtu && (q = net_link_set_mtu(ns, ifindex, s->mtu)) < 0 && !r)
		r = q;
	if (s->has_promisc &&
	    (q = net_linkattr_set_flag(ns, ifindex, IFF_PROMISC, s->promisc)) < 0 && !r)
		r = q;
	if (s->has_mac && (q = net_linkattr_set_hwaddr(ns, ifindex, s->mac, s->mac_len)) < 0 && !r)
		r = q;
	return r;
}

/*
 * Sysctls that are gone (their interface with them) need nothing back; one with no path
 * had no value to read (write_only()), and none to put back.
 */
static int restore_sysctls(struct net_ns *ns, const struct tuning_state_sysctl *v, size_t n)
{
	int r = 0, q;

	for (size_t i = n; i-- > 0;) {
		if (!v[i].path[0])
			continue;
		q = net_sysctl_write(ns, v[i].path, v[i].value);
		if (q < 0 && q != -ENOENT && !r)
			r = q;
	}
	return r;
}

/* The originals of every sysctl (for an ADD that fails) and what DEL restores. */
static int read_originals(struct net_ns *ns, const struct tuning_conf *c, const char *ifname,
			  const struct net_linkattr *la, struct tuning_state_sysctl *orig,
			  struct tuning_state *st, struct cni_err *err)
{
	_cleanup_free_ struct net_sysctl_op *ops = calloc(c->n_sysctls + 1, sizeof(*ops));
	size_t done;
	int r;

	if (!ops)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < c->n_sysctls; i++) {
		snprintf(orig[i].path, sizeof(orig[i].path), "%s", c->sysctls[i].path);
		ops[i] = (struct net_sysctl_op){ .rel = c->sysctls[i].path, .buf = orig[i].value,
						 .len = sizeof(orig[i].value) };
	}
	for (size_t at = 0; at < c->n_sysctls; at += done + 1) {
		r = net_sysctl_batch(ns, ops + at, c->n_sysctls - at, &done);
		if (r == 0)
			break;
		if (!write_only(r))
			return sysctl_read_err(&c->sysctls[at + done], r, err);
		/* Written as the reference writes it; nothing to put back at an undo or DEL. */
		log_info("sysctl %s: the kernel lets it be written, not read (%s): set, not restored",
			 c->sysctls[at + done].key, strerror(-r));
		orig[at + done].path[0] = '\0';
	}
	for (size_t i = 0; i < c->n_sysctls; i++) {
		const struct tuning_sysctl *s = &c->sysctls[i];

		if (!orig[i].path[0])
			continue;
		if (s->scope == TUNING_KEY_OWN)
			st->sysctls[st->n_sysctls++] = orig[i];
		else if (s->scope == TUNING_KEY_OTHER)
			log_info("sysctl %s names an interface other than %s: set as asked, left as "
				 "set by DEL", s->key, ifname);
	}
	st->has_mac = c->has_mac;
	st->mac_len = la->hwaddr_len;
	memcpy(st->mac, la->hwaddr, la->hwaddr_len);
	st->has_promisc = c->promisc;
	st->promisc = la->flags & IFF_PROMISC;
	st->has_mtu = c->mtu != 0;
	st->mtu = la->mtu;
	st->has_allmulti = c->has_allmulti;
	st->allmulti = la->flags & IFF_ALLMULTI;
	st->has_txqlen = c->has_txqlen;
	st->txqlen = la->txqlen;
	return 0;
}

static int mtu_err(const struct net_linkattr *la, unsigned int mtu, const char *ifname, int r,
		   struct cni_err *err)
{
	if (r == -EINVAL && la->max_mtu && (mtu < la->min_mtu || mtu > la->max_mtu))
		return net_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "invalid MTU %u for %s: it takes %u to %u", mtu, ifname, la->min_mtu,
				   la->max_mtu);
	return net_err_op(err, r, "failed to set MTU of", ifname);
}

/*
 * In upstream's order: sysctls, MAC, promisc, MTU, allmulti, txQLen. @undo
 * collects the values @la found of what is set, for the caller to put back;
 * @ret_sysctls counts the sysctls written, the one that failed included.
 */
static int apply(struct net_ns *ns, const struct tuning_conf *c, const struct net_linkattr *la,
		 const char *ifname, size_t *ret_sysctls, struct tuning_state *undo,
		 struct cni_err *err)
{
	_cleanup_free_ struct net_sysctl_op *ops = calloc(c->n_sysctls + 1, sizeof(*ops));
	int ifindex = la->ifindex;
	int r;

	if (!ops)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < c->n_sysctls; i++)
		ops[i] = (struct net_sysctl_op){ .rel = c->sysctls[i].path, .value = c->sysctls[i].value };
	r = net_sysctl_batch(ns, ops, c->n_sysctls, ret_sysctls);
	if (r < 0) {
		const struct tuning_sysctl *s = &c->sysctls[(*ret_sysctls)++];

		/* Counted as set: the kernel may have taken a part of it ("1\n5": the 1). */

		if (r == -EINVAL)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
					   "sysctl %s: the kernel refused the value \"%.128s\"", s->key,
					   s->value);
		/* A short write: what the kernel read of the value, not all of it ("1\n5"). */
		if (r == -EIO)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
					   "sysctl %s: the kernel took only a part of the value \"%.128s\"",
					   s->key, s->value);
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot write /proc/sys/net/%s: %s",
				   s->path, strerror(-r));
	}
	if (c->has_mac) {
		r = net_linkattr_set_hwaddr(ns, ifindex, c->mac, c->mac_len);
		if (r < 0)
			return net_err_op(err, r, "failed to set MAC address of", ifname);
		undo->has_mac = true;
		undo->mac_len = la->hwaddr_len;
		memcpy(undo->mac, la->hwaddr, la->hwaddr_len);
	}
	if (c->promisc) {
		r = net_linkattr_set_flag(ns, ifindex, IFF_PROMISC, true);
		if (r < 0)
			return net_err_op(err, r, "failed to set promiscuous mode of", ifname);
		undo->has_promisc = true;
		undo->promisc = la->flags & IFF_PROMISC;
	}
	if (c->mtu) {
		r = net_link_set_mtu(ns, ifindex, c->mtu);
		if (r < 0)
			return mtu_err(la, c->mtu, ifname, r, err);
		undo->has_mtu = true;
		undo->mtu = la->mtu;
	}
	if (c->has_allmulti) {
		r = net_linkattr_set_flag(ns, ifindex, IFF_ALLMULTI, c->allmulti);
		if (r < 0)
			return net_err_op(err, r, "failed to set all-multicast mode of", ifname);
		undo->has_allmulti = true;
		undo->allmulti = la->flags & IFF_ALLMULTI;
	}
	if (c->has_txqlen) {
		r = net_linkattr_set_txqlen(ns, ifindex, c->txqlen);
		if (r < 0)
			return net_err_op(err, r, "failed to set the transmit queue length of", ifname);
	}
	return 0;
}

/*
 * An attachment with a state already (an ADD again, after one killed halfway
 * and no DEL between): what the first ADD found is the original, what is
 * there now may be its change. DEL restores what either changed.
 */
static int merge_first_state(const struct tuning_state *old, struct tuning_state *st)
{
	struct tuning_state_sysctl *v;

	if (old->has_mac) {
		st->has_mac = true;
		st->mac_len = old->mac_len;
		memcpy(st->mac, old->mac, old->mac_len);
	}
	if (old->has_mtu) {
		st->has_mtu = true;
		st->mtu = old->mtu;
	}
	if (old->has_promisc) {
		st->has_promisc = true;
		st->promisc = old->promisc;
	}
	if (old->has_allmulti) {
		st->has_allmulti = true;
		st->allmulti = old->allmulti;
	}
	if (old->has_txqlen) {
		st->has_txqlen = true;
		st->txqlen = old->txqlen;
	}
	v = realloc(st->sysctls, (st->n_sysctls + old->n_sysctls + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	st->sysctls = v;
	for (size_t j = 0; j < old->n_sysctls; j++) {
		size_t i = 0;

		while (i < st->n_sysctls && strcmp(v[i].path, old->sysctls[j].path) != 0)
			i++;
		if (i == TUNING_MAX_SYSCTLS)
			return -E2BIG;
		v[i] = old->sysctls[j];
		if (i == st->n_sysctls)
			st->n_sysctls++;
	}
	return 0;
}

/* The state to keep, and the one to put back when this ADD fails (@old, when there was one). */
static int prepare_state(const char *name, struct tuning_state *st, struct tuning_state *old,
			 bool *ret_had_old, struct cni_err *err)
{
	int r = tuning_state_load(name, old);

	*ret_had_old = false;
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		log_warning("ADD: the state %s/%s kept before cannot be used (%s); replaced",
			    TUNING_STATE_DIR, name, r == -EBADMSG ? "not one tuning wrote" : strerror(-r));
		return 0;
	}
	*ret_had_old = true;
	r = merge_first_state(old, st);
	if (r == -E2BIG)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "more than %d sysctls of %s to restore with the state an earlier ADD "
				   "kept; DEL the attachment first", TUNING_MAX_SYSCTLS, name);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	return 0;
}

/* prevResult passed on, with the new MAC where it names the interface (as upstream). */
static int make_result(const struct cni_ctx *ctx, const struct tuning_conf *c,
		       struct cni_result *ret, struct cni_err *err)
{
	struct cni_result res;

	if (cni_result_copy(ctx->conf.prev_result, &res) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; c->has_mac && i < res.n_ifaces; i++)
		if (strcmp(res.ifaces[i].name, ctx->env.ifname) == 0)
			snprintf(res.ifaces[i].mac, sizeof(res.ifaces[i].mac), "%s", c->mac_text);
	*ret = res;
	return 0;
}

/* The kernel keeps the first addr_len octets of a longer address: the result would lie. */
static int check_mac_len(const struct tuning_conf *c, const struct net_linkattr *la,
			 const char *ifname, struct cni_err *err)
{
	if (!c->has_mac || c->mac_len == la->hwaddr_len)
		return 0;
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "invalid MAC address \"%s\" for %s: its addresses are %zu octets, not %zu",
			   c->mac_text, ifname, la->hwaddr_len, c->mac_len);
}

static int tuning_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct tuning_state_sysctl *orig = NULL;
	struct tuning_state st = { 0 }, undo = { 0 }, old = { 0 };
	struct attach a = { .pod_fd = -1 };
	struct tuning_conf c = { 0 };
	struct net_linkattr la;
	char name[NAME_MAX + 1];
	size_t n_applied = 0;
	bool saved = false, had_old = false;
	int r;

	if ((r = tuning_config_load(ctx, TUNING_ALLOWLIST_PATH, &c, err)) < 0)
		return r;
	if ((r = need_prev_result(ctx, err)) < 0 || (r = state_name(ctx, name, sizeof(name), err)) < 0)
		goto out;
	orig = calloc(c.n_sysctls + 1, sizeof(*orig));
	st.sysctls = calloc(c.n_sysctls + 1, sizeof(*st.sysctls));
	if (!orig || !st.sysctls) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto out;
	}
	if ((r = attach_open(&a, ctx, err)) < 0 || (r = find_link(a.pod, ifname, &la, err)) < 0 ||
	    (r = check_mac_len(&c, &la, ifname, err)) < 0 ||
	    (r = read_originals(a.pod, &c, ifname, &la, orig, &st, err)) < 0 ||
	    (r = prepare_state(name, &st, &old, &had_old, err)) < 0)
		goto out;

	/* Kept before anything changes: a plugin killed halfway leaves DEL what to restore. */
	if (!tuning_state_empty(&st)) {
		r = tuning_state_save(name, &st);
		if (r < 0) {
			cni_err_set(err, CNI_ERR_IO, r, "cannot keep the state of %s in %s: %s", ifname,
				    TUNING_STATE_DIR, strerror(-r));
			goto out;
		}
		saved = true;
	} else if (tuning_state_remove(name) < 0) {
		/* Only the temporary files killed saves of this container left: tried again at DEL. */
		log_warning("ADD: cannot remove what killed saves left in %s", TUNING_STATE_DIR);
	}
	r = apply(a.pod, &c, &la, ifname, &n_applied, &undo, err);
	if (r < 0)
		goto fail;
	r = make_result(ctx, &c, ret, err);
	if (r < 0)
		goto fail;
	log_debug("ADD %s: tuned %s (%zu sysctls)", ctx->env.container_id, ifname, c.n_sysctls);
	goto out;

fail:
	if (restore_link(a.pod, la.ifindex, &undo) < 0)
		log_warning("undo: cannot put back every attribute of %s", ifname);
	if (restore_sysctls(a.pod, orig, n_applied) < 0)
		log_warning("undo: cannot put back every sysctl of %s", ifname);
	if (saved && (had_old ? tuning_state_save(name, &old) : tuning_state_remove(name)) < 0)
		log_warning("undo: cannot %s the state %s/%s", had_old ? "put back" : "remove",
			    TUNING_STATE_DIR, name);
out:
	attach_close(&a);
	tuning_state_free(&old);
	tuning_state_free(&st);
	free(orig);
	tuning_config_free(&c);
	return r;
}

static int tuning_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct tuning_state st = { 0 };
	struct net_linkattr la;
	char name[NAME_MAX + 1];
	int r;

	if ((r = state_name(ctx, name, sizeof(name), err)) < 0)
		return r;
	r = tuning_state_load(name, &st);
	if (r == -ENOENT) {
		/* No record, but maybe the temporary file of a save killed before its rename. */
		r = tuning_state_remove(name);
		if (r < 0)
			return cni_err_set(err, CNI_ERR_IO, r, "cannot tidy %s: %s", TUNING_STATE_DIR,
					   strerror(-r));
		return 0;
	}
	if (r == -EBADMSG) {
		/* Not trusted, not removed: what it says may be anything, and an admin may want to see it. */
		log_error("DEL: the state %s/%s is not one tuning wrote; nothing restored from it",
			  TUNING_STATE_DIR, name);
		return 0;
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read the state %s/%s: %s",
				   TUNING_STATE_DIR, name, strerror(-r));
	r = attach_open_del(&a, ctx, err);
	if (r < 0)
		goto out;
	if (r > 0) {
		r = net_linkattr_get(a.pod, ifname, &la);
		if (r == -ENODEV) {
			log_debug("DEL: %s is gone, nothing to restore", ifname);
		} else if (r < 0) {
			net_err_op(err, r, "failed to read link", ifname);
			goto out;
		} else {
			r = restore_link(a.pod, la.ifindex, &st);
			if (r < 0) {
				net_err_op(err, r, "failed to restore the attributes of", ifname);
				goto out;
			}
			r = restore_sysctls(a.pod, st.sysctls, st.n_sysctls);
			if (r < 0) {
				cni_err_set(err, CNI_ERR_KERNEL, r, "failed to restore the sysctls of %s: %s",
					    ifname, strerror(-r));
				goto out;
			}
		}
	}
	r = tuning_state_remove(name);
	if (r < 0)
		cni_err_set(err, CNI_ERR_IO, r, "cannot remove the state %s/%s: %s", TUNING_STATE_DIR,
			    name, strerror(-r));
out:
	attach_close(&a);
	tuning_state_free(&st);
	return r < 0 ? r : 0;
}

static int check_fail(struct cni_err *err, const char *fmt, const char *ifname, const char *want,
		      const char *have)
{
	return cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
			   "Tuning configured %s of %s is %s, current value is %s", fmt, ifname, want,
			   have);
}

static int check_link(const struct tuning_conf *c, const struct net_linkattr *la,
		      const char *ifname, struct cni_err *err)
{
	char want[64], have[64];
	bool promisc = la->flags & IFF_PROMISC, allmulti = la->flags & IFF_ALLMULTI;

	hwaddr_format(la->hwaddr, la->hwaddr_len, have, sizeof(have));
	if (c->has_mac && strcmp(c->mac_text, have) != 0)
		return check_fail(err, "Ethernet", ifname, c->mac_text, have);
	/* As upstream: promisc not asked for means promisc off. */
	if (c->promisc != promisc)
		return check_fail(err, "promisc", ifname, c->promisc ? "true" : "false",
				  promisc ? "true" : "false");
	snprintf(want, sizeof(want), "%u", c->mtu);
	snprintf(have, sizeof(have), "%u", la->mtu);
	if (c->mtu && c->mtu != la->mtu)
		return check_fail(err, "MTU", ifname, want, have);
	if (c->has_allmulti && c->allmulti != allmulti)
		return check_fail(err, "all-multicast mode", ifname, c->allmulti ? "true" : "false",
				  allmulti ? "true" : "false");
	snprintf(want, sizeof(want), "%u", c->txqlen);
	snprintf(have, sizeof(have), "%u", la->txqlen);
	if (c->has_txqlen && c->txqlen != la->txqlen)
		return check_fail(err, "Transmit Queue Length", ifname, want, have);
	return 0;
}

static int tuning_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	const char *ifname = ctx->env.ifname;
	struct attach a = { .pod_fd = -1 };
	struct tuning_conf c = { 0 };
	char have[TUNING_SYSCTL_VALUE_MAX];
	struct net_linkattr la;
	int r;

	if ((r = tuning_config_load(ctx, TUNING_ALLOWLIST_PATH, &c, err)) < 0)
		return r;
	if ((r = need_prev_result(ctx, err)) < 0 || (r = attach_open(&a, ctx, err)) < 0)
		goto out;
	for (size_t i = 0; i < c.n_sysctls; i++) {
		const struct tuning_sysctl *s = &c.sysctls[i];

		r = net_sysctl_read(a.pod, s->path, have, sizeof(have));
		if (r < 0) {
			sysctl_read_err(s, r, err);
			goto out;
		}
		if (strcmp(have, s->value) != 0) {
			r = cni_err_set(err, CNI_ERR_CHECK_FAILED, -EINVAL,
					"Tuning configured value of /proc/sys/net/%s is %.128s, current "
					"value is %.128s", s->path, s->value, have);
			goto out;
		}
	}
	if ((r = find_link(a.pod, ifname, &la, err)) < 0)
		goto out;
	r = check_link(&c, &la, ifname, err);
out:
	attach_close(&a);
	tuning_config_free(&c);
	return r;
}

const struct cni_plugin tuning_plugin = {
	.name = "tuning",
	.summary = "tuning: sets sysctls, MAC, MTU, promisc, allmulti and txQLen of a pod's "
		   "interface, chained after the plugin that makes it",
	.keys = tuning_config_keys,
	.add = tuning_add,
	.del = tuning_del,
	.check = tuning_check,
};
