/* portmap network config: backend, snat, marks, conditions, the runtime's port mappings */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/netfilter/ipt-batch.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "plugins/portmap/config.h"

static const char *const top_keys[] = { "backend", "snat", "masqAll", "markMasqBit", "externalSetMarkChain", "conditionsV4", "conditionsV6", NULL };

const struct cni_conf_keys portmap_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

/* Every refusal reads as upstream's does: "failed to parse config: ...". */
static int refuse(struct cni_err *err, int r)
{
	return cni_err_prefix(err, r, "failed to parse config");
}

void portmap_config_free(struct portmap_conf *c)
{
	cjson_strv_free(c->cond4.v, c->cond4.n);
	cjson_strv_free(c->cond6.v, c->cond6.n);
	free(c->set_mark_chain);
	free(c->maps);
	*c = (struct portmap_conf){ 0 };
}

static int load_conditions(const struct cni_ctx *ctx, const char *key, struct portmap_conditions *c,
			   struct cni_err *err)
{
	int r = cni_conf_get_str_array(&ctx->conf, key, &c->v, &c->n, err);

	if (r <= 0)
		return r;
	if (c->n > PORTMAP_MAX_CONDITIONS)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG,
				   "%s: %zu conditions, at most %d", key, c->n, PORTMAP_MAX_CONDITIONS);
	for (size_t i = 0; i < c->n; i++) {
		if (strlen(c->v[i]) > PORTMAP_CONDITION_MAX)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "%s[%zu]: longer than %d bytes", key, i,
					   PORTMAP_CONDITION_MAX);
		/*
		 * Upstream hands nftables conditions to nft as text: a newline there starts a
		 * command of its own ("flush ruleset"). No control character is a condition.
		 */
		for (const char *p = c->v[i]; *p; p++)
			if ((unsigned char)*p < ' ' || *p == 0x7f)
				return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
						   "%s[%zu]: a control character (0x%02x) is no condition",
						   key, i, (unsigned char)*p);
	}
	return 0;
}

int portmap_conditions_backend(const struct portmap_conditions *c)
{
	if (!c->v || c->n == 0 || !c->v[0][0])
		return -1;
	return c->v[0][0] == '-' || c->v[0][0] == '!' ? PORTMAP_IPTABLES : PORTMAP_NFTABLES;
}

int portmap_config_check_backend(const struct portmap_conf *c, struct cni_err *err)
{
	enum portmap_backend wrong = c->backend == PORTMAP_IPTABLES ? PORTMAP_NFTABLES : PORTMAP_IPTABLES;
	char list[96] = "";
	size_t len = 0;

	if (wrong == PORTMAP_IPTABLES && c->set_mark_chain)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "externalSetMarkChain");
	if ((int)wrong == portmap_conditions_backend(&c->cond4))
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%sconditionsV4", len ? " " : "");
	if ((int)wrong == portmap_conditions_backend(&c->cond6))
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%sconditionsV6", len ? " " : "");
	if (!len)
		return 0;
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "%s backend was requested but configuration contains %s-specific options [%s]",
			   c->backend == PORTMAP_IPTABLES ? "iptables" : "nftables",
			   wrong == PORTMAP_IPTABLES ? "iptables" : "nftables", list);
}

static int load_mapping(struct json_object *o, size_t i, struct portmap_mapping *m,
			struct cni_err *err)
{
	const char *proto = NULL, *host_ip = NULL;
	int64_t hp = 0, cp = 0;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "runtimeConfig.portMappings[%zu]: expected an object, got %s", i,
				   cjson_type_name(o));
	if ((r = cjson_get_int(o, "hostPort", INT64_MIN, INT64_MAX, &hp, err)) < 0 ||
	    (r = cjson_get_int(o, "containerPort", INT64_MIN, INT64_MAX, &cp, err)) < 0 ||
	    (r = cjson_get_str(o, "protocol", &proto, err)) < 0 ||
	    (r = cjson_get_str(o, "hostIP", &host_ip, err)) < 0)
		return cni_err_prefix(err, r, "runtimeConfig.portMappings[%zu]", i);
	/* Upstream's two checks, in its order; a port past 65535 fails there only in iptables. */
	if (cp <= 0 || cp > 65535)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "Invalid container port number: %lld (a port is 1 to 65535)",
				   (long long)cp);
	if (hp <= 0 || hp > 65535)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "Invalid host port number: %lld (a port is 1 to 65535)", (long long)hp);
	m->host_port = (uint16_t)hp;
	m->container_port = (uint16_t)cp;
	if (proto && strcasecmp(proto, "tcp") == 0) {
		m->proto = IPPROTO_TCP;
		m->proto_name = "tcp";
	} else if (proto && strcasecmp(proto, "udp") == 0) {
		m->proto = IPPROTO_UDP;
		m->proto_name = "udp";
	} else if (proto && strcasecmp(proto, "sctp") == 0) {
		m->proto = IPPROTO_SCTP;
		m->proto_name = "sctp";
	} else {
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "runtimeConfig.portMappings[%zu]: protocol \"%.16s\": tcp, udp or sctp",
				   i, proto ? proto : "");
	}
	if (host_ip && *host_ip) {
		if (ip_addr_parse_unmapped(host_ip, &m->host_ip) < 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "runtimeConfig.portMappings[%zu]: hostIP \"%.64s\" is not an "
					   "IP address", i, host_ip);
		m->host_ip_unspecified = true;
		for (size_t k = 0; k < ip_addr_size(&m->host_ip); k++)
			m->host_ip_unspecified &= m->host_ip.bytes[k] == 0;
		m->has_host_ip = !m->host_ip_unspecified;
	}
	return 0;
}

static int load_mappings(const struct cni_ctx *ctx, struct portmap_conf *c, struct cni_err *err)
{
	struct json_object *rc = NULL, *maps = NULL;
	size_t n;
	int r;

	r = cjson_get_typed(ctx->conf.root, "runtimeConfig", json_type_object, &rc, err);
	if (r <= 0)
		return r;
	r = cjson_get_typed(rc, "portMappings", json_type_array, &maps, err);
	if (r < 0)
		return cni_err_prefix(err, r, "runtimeConfig");
	if (r == 0)
		return 0;
	n = json_object_array_length(maps);
	if (n > PORTMAP_MAX_MAPPINGS)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG,
				   "runtimeConfig.portMappings: %zu mappings, at most %d", n,
				   PORTMAP_MAX_MAPPINGS);
	c->maps = calloc(n + 1, sizeof(*c->maps));
	if (!c->maps)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		r = load_mapping(json_object_array_get_idx(maps, i), i, &c->maps[i], err);
		if (r < 0)
			return r;
	}
	c->n_maps = n;
	return 0;
}

/*
 * The container's addresses as upstream picks them: for each family the first of
 * prevResult's whose interface is CNI_IFNAME in a sandbox (or that names none).
 */
static void pick_addresses(const struct cni_result *prev, const char *ifname,
			   struct portmap_conf *c)
{
	for (size_t i = 0; prev && i < prev->n_ips; i++) {
		const struct cni_ip *ip = &prev->ips[i];
		bool v4 = ip->address.addr.family == AF_INET;

		if (v4 ? c->has_ip4 : c->has_ip6)
			continue;
		if (ip->iface >= 0 && (size_t)ip->iface < prev->n_ifaces) {
			const struct cni_iface *f = &prev->ifaces[ip->iface];

			if (!f->name || strcmp(f->name, ifname) != 0 || !f->sandbox || !*f->sandbox)
				continue;
		}
		if (v4) {
			c->ip4 = ip->address;
			c->has_ip4 = true;
		} else {
			c->ip6 = ip->address;
			c->has_ip6 = true;
		}
	}
}

static int load_marks(const struct cni_ctx *ctx, struct portmap_conf *c, struct cni_err *err)
{
	const char *chain = NULL;
	int64_t bit = PORTMAP_DEFAULT_MARK_BIT;
	int r, has_bit;

	has_bit = cni_conf_get_int(&ctx->conf, "markMasqBit", INT64_MIN, INT64_MAX, &bit, err);
	if (has_bit < 0)
		return has_bit;
	if ((r = cni_conf_get_str(&ctx->conf, "externalSetMarkChain", &chain, err)) < 0)
		return r;
	if (has_bit && chain)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "Cannot specify externalSetMarkChain and markMasqBit");
	if (bit < 0 || bit > 31)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "MasqMarkBit must be between 0 and 31");
	c->mark_bit = (unsigned int)bit;
	if (!chain)
		return 0;
	/* Named in every hairpin rule: a name iptables takes, and no room for another argument. */
	if (!ipt_chain_name_valid(chain))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "externalSetMarkChain \"%.64s\": not an iptables chain name (1 to 28 "
				   "printable characters, no blank or quote)", chain);
	c->set_mark_chain = strdup(chain);
	return c->set_mark_chain ? 0 : cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
}

int portmap_config_load(const struct cni_ctx *ctx, struct portmap_conf *ret, struct cni_err *err)
{
	struct portmap_conf c = { .snat = true };
	const char *backend = NULL;
	int r;

	if ((r = cni_conf_get_str(&ctx->conf, "backend", &backend, err)) < 0)
		goto fail;
	if (backend) {
		c.backend_given = true;
		if (strcmp(backend, "iptables") == 0) {
			c.backend = PORTMAP_IPTABLES;
		} else if (strcmp(backend, "nftables") == 0) {
			c.backend = PORTMAP_NFTABLES;
		} else {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"unrecognized backend \"%.32s\"", backend);
			goto fail;
		}
	}
	if ((r = cni_conf_get_bool(&ctx->conf, "snat", &c.snat, err)) < 0 ||
	    (r = cni_conf_get_bool(&ctx->conf, "masqAll", &c.masq_all, err)) < 0 ||
	    (r = load_marks(ctx, &c, err)) < 0 ||
	    (r = load_conditions(ctx, "conditionsV4", &c.cond4, err)) < 0 ||
	    (r = load_conditions(ctx, "conditionsV6", &c.cond6, err)) < 0 ||
	    (r = load_mappings(ctx, &c, err)) < 0)
		goto fail;
	if (c.backend_given && (r = portmap_config_check_backend(&c, err)) < 0)
		goto fail;
	pick_addresses(ctx->conf.prev_result, ctx->env.ifname, &c);
	*ret = c;
	return 0;
fail:
	portmap_config_free(&c);
	return refuse(err, r);
}

bool portmap_mapping_in(const struct portmap_mapping *m, bool v6)
{
	return !(m->has_host_ip || m->host_ip_unspecified) ||
	       (m->host_ip.family == AF_INET6) == v6;
}
