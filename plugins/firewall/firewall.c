/* firewall CNI meta plugin: a chained pod's addresses let through the node's firewall */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/plugin.h"
#include "common/cni/result-copy.h"
#include "common/cni/result.h"
#include "common/dbus/dbus.h"
#include "common/netfilter/iptables.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "common/util/text.h"
#include "plugins/firewall/config.h"
#include "plugins/firewall/firewall.h"
#include "plugins/firewall/firewalld.h"
#include "plugins/firewall/iptables.h"

/*
 * What each container was given, for GC (rules and sources name addresses, not
 * containers): "<container ID>:<network>", its backend, zone and addresses.
 */
#define RECORD_DIR RECORD_ROOT "/firewall"
#define RECORD_KIND "firewall"
#define RECORD_MAX (64u << 10)

DEFINE_CLEANUP_FUNC(dbus_closep, struct dbus_conn *, dbus_close);

/* The backend to use: the config's, else firewalld when it runs (its connection kept). */
static enum firewall_backend pick(const struct firewall_conf *c, struct dbus_conn **conn,
				  struct cni_err *err)
{
	*conn = NULL;
	if (c->backend == FIREWALL_IPTABLES)
		return FIREWALL_IPTABLES;
	if (c->backend == FIREWALL_FIREWALLD)
		return dbus_connect_system(conn, err) < 0 ? FIREWALL_AUTO : FIREWALL_FIREWALLD;
	return firewalld_running(conn) ? FIREWALL_FIREWALLD : FIREWALL_IPTABLES;
}

static int name_of(const struct cni_ctx *ctx, char *buf, size_t size)
{
	const char *parts[] = { ctx->env.container_id, ctx->conf.name };

	return record_name(parts, 2, buf, size);
}

/* "backend B\nzone Z\nip A/L\n...": what DEL and GC need when prevResult is gone. */
static int keep(const struct cni_ctx *ctx, const struct firewall_conf *c, enum firewall_backend b,
		struct cni_err *err)
{
	char name[RECORD_NAME_MAX + 1];
	struct text_buf t = { 0 };
	int r;

	if (name_of(ctx, name, sizeof(name)) < 0) {
		log_debug("container ID and network name too long for a record: GC will not see it");
		return 0;
	}
	text_buf_puts(&t, b == FIREWALL_FIREWALLD ? "backend firewalld\nzone " : "backend iptables\nzone ");
	text_buf_puts(&t, c->zone);
	text_buf_putc(&t, '\n');
	for (size_t i = 0; i < c->n_ips; i++) {
		char text[IP_PREFIX_STRLEN];

		text_buf_puts(&t, "ip ");
		text_buf_puts(&t, ip_prefix_format(&c->ips[i], text, sizeof(text)));
		text_buf_putc(&t, '\n');
	}
	text_buf_putc(&t, '\0');
	r = t.oom ? -ENOMEM : record_note(RECORD_DIR, name, RECORD_KIND, 1, t.data);
	text_buf_free(&t);
	return r < 0 ? cni_err_set(err, CNI_ERR_IO, r, "cannot keep the record of %s: %s", name,
				   strerror(-r)) : 0;
}

static int firewall_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	_cleanup_(dbus_closep) struct dbus_conn *conn = NULL;
	struct cni_result res = { 0 };
	struct firewall_conf c;
	enum firewall_backend b;
	int r;

	if ((r = firewall_config_load(ctx, &c, err)) < 0)
		return r == -EBADR ? (firewall_config_free(&c), -EINVAL) : r;
	if (!c.has_prev) {
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				"missing prevResult from earlier plugin");
		goto out;
	}
	if (cni_result_copy(ctx->conf.prev_result, &res) < 0) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto out;
	}
	b = pick(&c, &conn, err);
	if (b == FIREWALL_AUTO) {
		r = -EHOSTUNREACH;
		goto out;
	}
	/* Before the rules: a process killed after them leaves what GC needs. */
	if ((r = keep(ctx, &c, b, err)) < 0)
		goto out;
	if (b == FIREWALL_FIREWALLD) {
		r = firewalld_add(conn, c.zone, c.ips, c.n_ips, err);
		/* The ingress policy is iptables' whatever the backend, as upstream. */
		if (r >= 0 && c.policy != FIREWALL_OPEN && (r = firewall_ipt_add(&c, false, err)) < 0) {
			struct cni_err e = { 0 };

			if (firewalld_del(conn, c.zone, c.ips, c.n_ips, &e) < 0)
				log_warning("undo: %s", e.msg);
		}
	} else {
		r = firewall_ipt_add(&c, true, err);
	}
	if (r < 0) {
		char name[RECORD_NAME_MAX + 1];

		if (name_of(ctx, name, sizeof(name)) >= 0)
			(void)record_remove(RECORD_DIR, name);
		goto out;
	}
	*ret = res;
	res = (struct cni_result){ 0 };
out:
	cni_result_free(&res);
	firewall_config_free(&c);
	return r;
}

struct kept {
	enum firewall_backend backend;
	char zone[FIREWALL_ZONE_MAX];
	struct ip_prefix *ips;
	size_t n_ips;
};

/* A record's body read back; -ENOENT when there is none, -EBADMSG for one not ours. */
static int load_kept(const char *name, struct kept *ret)
{
	_cleanup_free_ char *body = NULL;
	struct kept k = { 0 };
	unsigned int version;
	char *p, *v;
	size_t cap = 0;
	int r;

	r = record_load(RECORD_DIR, name, RECORD_KIND, 1, RECORD_MAX, &body, &version);
	if (r < 0)
		return r;
	p = body;
	if (!(v = record_line(&p, "backend ")))
		return -EBADMSG;
	k.backend = strcmp(v, "firewalld") == 0 ? FIREWALL_FIREWALLD : FIREWALL_IPTABLES;
	if (!(v = record_line(&p, "zone ")))
		return -EBADMSG;
	snprintf(k.zone, sizeof(k.zone), "%s", v);
	while ((v = record_line(&p, "ip "))) {
		if (k.n_ips == cap) {
			struct ip_prefix *ips = reallocarray(k.ips, cap ? 2 * cap : 4, sizeof(*ips));

			if (!ips) {
				free(k.ips);
				return -ENOMEM;
			}
			k.ips = ips;
			cap = cap ? 2 * cap : 4;
		}
		if (ip_prefix_parse(v, &k.ips[k.n_ips]) < 0) {
			free(k.ips);
			return -EBADMSG;
		}
		k.n_ips++;
	}
	*ret = k;
	return 0;
}

/* Takes back what a backend added for some addresses. */
static int undo_backend(enum firewall_backend b, const char *zone, const struct ip_prefix *ips,
			size_t n, struct cni_err *err)
{
	_cleanup_(dbus_closep) struct dbus_conn *conn = NULL;
	int r;

	if (b == FIREWALL_IPTABLES)
		return firewall_ipt_del(ips, n, err);
	r = dbus_connect_system(&conn, err);
	return r < 0 ? r : firewalld_del(conn, zone, ips, n, err);
}

static int firewall_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_(dbus_closep) struct dbus_conn *conn = NULL;
	char name[RECORD_NAME_MAX + 1];
	struct firewall_conf c;
	struct kept k = { 0 };
	enum firewall_backend b;
	bool named;
	int r;

	r = firewall_config_load(ctx, &c, err);
	/* A policy ADD refuses: the reference's ADD may have made its rules before refusing. */
	if (r == -EBADR) {
		log_warning("DEL with %s: the addresses' rules go all the same", err->msg);
		*err = (struct cni_err){ 0 };
	} else if (r < 0) {
		return r;
	}
	named = name_of(ctx, name, sizeof(name)) >= 0;
	/* Without prevResult (upstream then does nothing), the record says what ADD did. */
	if (!c.has_prev && named && load_kept(name, &k) >= 0) {
		r = undo_backend(k.backend, k.zone, k.ips, k.n_ips, err);
		free(k.ips);
		goto done;
	}
	b = pick(&c, &conn, err);
	if (b == FIREWALL_AUTO)
		r = -EHOSTUNREACH;
	else if (b == FIREWALL_FIREWALLD)
		r = firewalld_del(conn, c.zone, c.ips, c.n_ips, err);
	else
		r = firewall_ipt_del(c.ips, c.n_ips, err);
done:
	if (r >= 0 && named && (r = record_remove(RECORD_DIR, name)) < 0)
		r = cni_err_set(err, CNI_ERR_IO, r, "cannot remove the record of %s: %s", name,
				strerror(-r));
	firewall_config_free(&c);
	return r;
}

static int firewall_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_(dbus_closep) struct dbus_conn *conn = NULL;
	struct firewall_conf c;
	enum firewall_backend b;
	int r;

	if ((r = firewall_config_load(ctx, &c, err)) < 0)
		return r == -EBADR ? (firewall_config_free(&c), -EINVAL) : r;
	if (!c.has_prev) {
		r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				"missing prevResult from earlier plugin");
	} else {
		b = pick(&c, &conn, err);
		r = b == FIREWALL_AUTO ? -EHOSTUNREACH :
		    b == FIREWALL_FIREWALLD ? firewalld_check(conn, c.zone, c.ips, c.n_ips, err) :
					      firewall_ipt_check(&c, err);
	}
	firewall_config_free(&c);
	return r;
}

/* STATUS: the backend the config names (or either) can be used. */
static int firewall_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	_cleanup_(dbus_closep) struct dbus_conn *conn = NULL;
	_cleanup_free_ char *out = NULL;
	struct cni_err e = { 0 };
	struct firewall_conf c;
	bool ok = false;
	int r;

	if ((r = firewall_config_load(ctx, &c, err)) < 0)
		return r == -EBADR ? (firewall_config_free(&c), -EINVAL) : r;
	if (c.backend != FIREWALL_IPTABLES)
		ok = firewalld_running(&conn);
	if (!ok && c.backend != FIREWALL_FIREWALLD)
		ok = ipt_list(IPT_IPV4, "filter", "FORWARD", &out, &e) >= 0;
	firewall_config_free(&c);
	if (ok)
		return 0;
	return cni_err_set(err, CNI_ERR_STATUS_UNAVAILABLE, -ENOEXEC, "firewall cannot write rules: %s",
			   !e.code ? "firewalld is not on the system bus" : e.msg);
}

/* GC: every record, so that an address another container holds (reused) keeps its rules. */
struct gc {
	const char *network;
	char **names;
	struct kept *kept;
	size_t n;
	struct cni_err *err;
};

static int gc_collect(const char *name, void *data)
{
	struct gc *g = data;
	char **names = reallocarray(g->names, g->n + 1, sizeof(*names));
	struct kept *kept;

	if (!names)
		return -ENOMEM;
	g->names = names;
	kept = reallocarray(g->kept, g->n + 1, sizeof(*kept));
	if (!kept)
		return -ENOMEM;
	g->kept = kept;
	kept[g->n] = (struct kept){ 0 };
	if (load_kept(name, &kept[g->n]) < 0)
		return 0;
	if (!(names[g->n] = strdup(name)))
		return -ENOMEM;
	g->n++;
	return 0;
}

/* Whether a record other than @self's (and not already swept) holds the address. */
static bool held(const struct gc *g, size_t self, const struct ip_prefix *ip, enum firewall_backend b)
{
	for (size_t i = 0; i < g->n; i++)
		for (size_t k = 0; i != self && g->names[i] && k < g->kept[i].n_ips; k++)
			if (g->kept[i].backend == b && ip_addr_equal(&g->kept[i].ips[k].addr, &ip->addr))
				return true;
	return false;
}

static int gc_gone(const char *cid, bool elsewhere, void *data)
{
	struct gc *g = data;
	char name[RECORD_NAME_MAX + 1];
	struct kept *k;
	size_t self, n = 0;
	int r;

	(void)elsewhere;
	snprintf(name, sizeof(name), "%s:%s", cid, g->network);
	for (self = 0; self < g->n && (!g->names[self] || strcmp(g->names[self], name)); self++)
		;
	if (self == g->n)
		return 0;
	k = &g->kept[self];
	for (size_t i = 0; i < k->n_ips; i++)
		if (!held(g, self, &k->ips[i], k->backend))
			k->ips[n++] = k->ips[i];
	log_debug("GC: container %s of network %s is gone: %zu address(es) go", cid, g->network, n);
	r = undo_backend(k->backend, k->zone, k->ips, n, g->err);
	if (r >= 0) {
		free(g->names[self]);
		g->names[self] = NULL;
	}
	return r;
}

/*
 * GC: the rules (or zone sources) of this network's containers that are not among the
 * valid attachments, unless another container's record holds the address. Upstream has
 * no GC.
 */
static int firewall_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_attachment *valid = NULL;
	struct gc g = { .network = ctx->conf.name, .err = err };
	size_t n = 0;
	int r;

	r = cni_conf_gc_attachments(&ctx->conf, &valid, &n, err);
	if (r > 0 && (r = record_list(RECORD_DIR, gc_collect, &g)) >= 0)
		r = record_sweep(RECORD_DIR, ctx->conf.name, valid, n, gc_gone, &g);
	if (r < 0 && !err->code)
		r = cni_err_set(err, CNI_ERR_IO, r, "cannot sweep %s: %s", RECORD_DIR, strerror(-r));
	for (size_t i = 0; i < g.n; i++) {
		free(g.names[i]);
		free(g.kept[i].ips);
	}
	free(g.names);
	free(g.kept);
	cni_attachments_free(valid, n);
	return r;
}

const struct cni_plugin firewall_plugin = {
	.name = "firewall",
	.keys = firewall_config_keys,
	.summary = "firewall: a chained pod's addresses let through (iptables, or firewalld over D-Bus)",
	.about_state = "Keeps " RECORD_DIR "/<container ID>:<network> (its addresses, for GC)",
	.add = firewall_add,
	.del = firewall_del,
	.check = firewall_check,
	.status = firewall_status,
	.gc = firewall_gc,
};
