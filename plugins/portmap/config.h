/* portmap network config: backend, snat, marks, conditions, the runtime's port mappings */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/conf-keys.h"
#include "common/util/ipaddr.h"

/* The keys portmap reads: a near miss of one is warned of (cni_conf_keys_warn()). */
extern const struct cni_conf_keys portmap_config_keys[];

struct cni_ctx;
struct cni_err;
struct cni_result;

/* Upstream's default masquerade mark bit: Kubernetes uses 14 and 15, Calico 20 to 31. */
#define PORTMAP_DEFAULT_MARK_BIT 13
/*
 * More mappings than any pod asks for (a port is one of 65535, a protocol one of three):
 * bounds the rules one ADD writes. Upstream has no bound and runs two processes per rule.
 */
#define PORTMAP_MAX_MAPPINGS 4096
/* The words of conditionsV4 or conditionsV6, and the bytes of one. */
#define PORTMAP_MAX_CONDITIONS 64
#define PORTMAP_CONDITION_MAX 255

enum portmap_backend {
	PORTMAP_IPTABLES,
	PORTMAP_NFTABLES,
};

struct portmap_mapping {
	uint16_t host_port;
	uint16_t container_port;
	uint8_t proto;              /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP */
	const char *proto_name;     /* "tcp", "udp", "sctp" */
	bool has_host_ip;           /* a hostIP of an address (not "" and not unspecified) */
	bool host_ip_unspecified;   /* "0.0.0.0" or "::": both, but only of its family */
	struct ip_addr host_ip;
};

struct portmap_conditions {
	char **v;                   /* NULL when absent (or null) */
	size_t n;
};

struct portmap_conf {
	enum portmap_backend backend;
	bool backend_given;         /* "backend" named one; else the node's (portmap_backend_pick()) */
	bool snat;                  /* default true */
	bool masq_all;
	unsigned int mark_bit;
	char *set_mark_chain;       /* "externalSetMarkChain", NULL when absent */
	struct portmap_conditions cond4, cond6;
	struct portmap_mapping *maps;
	size_t n_maps;
	/* The container's addresses, from prevResult (the first of each family). */
	bool has_ip4, has_ip6;
	struct ip_prefix ip4, ip6;
};

/**
 * portmap_config_load() - read and validate the plugin's keys, runtimeConfig and prevResult
 * @ctx: context (CNI_IFNAME picks prevResult's addresses)
 * @ret: config, written only on success; release with portmap_config_free()
 * @err: code 6 for a wrong type, 7 for a value refused (both prefixed "failed to parse
 *       config:", as upstream's)
 *
 * A backend the config does not name is left for portmap_backend_pick(); options of the
 * other backend than the one named are refused as upstream refuses them.
 *
 * Return: 0 on success, negative errno on failure.
 */
int portmap_config_load(const struct cni_ctx *ctx, struct portmap_conf *ret, struct cni_err *err);

/**
 * portmap_config_free() - release what a loaded config owns and zero it
 * @c: config
 */
void portmap_config_free(struct portmap_conf *c);

/**
 * portmap_conditions_backend() - which backend a condition list is written for
 * @c: conditions
 *
 * As upstream: none when absent, empty or its first word empty; iptables when the first
 * word starts with '-' or '!'; nftables otherwise.
 *
 * Return: -1 for none, PORTMAP_IPTABLES or PORTMAP_NFTABLES.
 */
int portmap_conditions_backend(const struct portmap_conditions *c);

/**
 * portmap_config_check_backend() - refuse options of the other backend than the chosen one
 * @c: config, its backend chosen
 * @err: code 7 naming the options, as upstream's message
 *
 * Return: 0 when they agree, -EINVAL otherwise.
 */
int portmap_config_check_backend(const struct portmap_conf *c, struct cni_err *err);

/**
 * portmap_mapping_in() - whether a mapping is forwarded for a family
 * @m: the mapping
 * @v6: IPv6, else IPv4
 *
 * A hostIP of the other family (the unspecified one included) keeps it out, as upstream.
 *
 * Return: true when it is.
 */
bool portmap_mapping_in(const struct portmap_mapping *m, bool v6);
