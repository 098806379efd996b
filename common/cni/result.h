/* CNI result: one model for 1.1.0 and conversion from and to every version */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct cni_err;
struct json_object;

#define CNI_MAC_STRLEN 64 /* an IPoIB address is 20 octets: 59 characters */

struct cni_iface {
	char *name;
	char mac[CNI_MAC_STRLEN]; /* "" when absent */
	int mtu;                  /* 0 when absent */
	char *sandbox;            /* NULL when absent (host-side interface) */
	char *socket_path;
	char *pci_id;
};

struct cni_ip {
	struct ip_prefix address;
	bool has_gateway;
	struct ip_addr gateway;
	int iface; /* index into interfaces, -1 when absent */
};

struct cni_route {
	struct ip_prefix dst;
	bool has_gw;
	struct ip_addr gw;
	int mtu;      /* 0 when absent */
	int advmss;   /* 0 when absent */
	int priority; /* 0 when absent */
	int table;    /* 0 when absent */
	int scope;    /* -1 when absent */
};

struct cni_dns {
	char **nameservers;
	size_t n_nameservers;
	char *domain;
	char **search;
	size_t n_search;
	char **options;
	size_t n_options;
};

struct cni_result {
	char cni_version[16];
	struct cni_iface *ifaces;
	size_t n_ifaces;
	struct cni_ip *ips;
	size_t n_ips;
	struct cni_route *routes;
	size_t n_routes;
	struct cni_dns dns;
};

/**
 * cni_result_free() - release everything a result owns and zero it
 * @res: result (not itself freed)
 */
void cni_result_free(struct cni_result *res);

/**
 * cni_result_add_iface() - append an interface
 * @res: result
 * @name: interface name
 * @mac: hardware address text or NULL
 * @sandbox: netns path or NULL
 *
 * Return: index of the new interface, negative errno on failure.
 */
int cni_result_add_iface(struct cni_result *res, const char *name, const char *mac,
			 const char *sandbox);

/**
 * cni_result_add_ip() - append an IP entry
 * @res: result
 * @ip: entry to copy
 *
 * Return: 0 on success, -ENOMEM.
 */
int cni_result_add_ip(struct cni_result *res, const struct cni_ip *ip);

/**
 * cni_result_add_route() - append a route
 * @res: result
 * @route: route to copy
 *
 * Return: 0 on success, -ENOMEM.
 */
int cni_result_add_route(struct cni_result *res, const struct cni_route *route);

/**
 * cni_result_set_dns() - replace the DNS section with a deep copy
 * @res: result
 * @dns: DNS to copy
 *
 * Return: 0 on success, -ENOMEM.
 */
int cni_result_set_dns(struct cni_result *res, const struct cni_dns *dns);

/**
 * cni_result_add_attachment() - an interface plugin's result: its interface and IPAM's addresses
 * @res: result to append to
 * @ifname: interface name in the pod
 * @mac: hardware address text, NULL for none
 * @sandbox: netns path
 * @ipam: IPAM's result: its ips are pointed at the interface, its routes copied
 * @dns: the DNS to report
 *
 * Return: 0 on success, -ENOMEM.
 */
int cni_result_add_attachment(struct cni_result *res, const char *ifname, const char *mac,
			      const char *sandbox, const struct cni_result *ipam,
			      const struct cni_dns *dns);

/**
 * cni_result_parse() - parse a result of any version into the model
 * @json: result text
 * @len: length of @json
 * @version: version to read it as when it carries no cniVersion
 * @ret: result, written only on success
 * @err: filled on failure (code 6 for bad JSON, 1 for an unknown version)
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_result_parse(const char *json, size_t len, const char *version,
		     struct cni_result *ret, struct cni_err *err);

/**
 * cni_result_to_json() - render the result in a version's shape
 * @res: result
 * @version: target version (0.1.0 ... 1.1.0)
 * @ret: malloc'ed JSON text, written only on success
 * @err: filled on failure ("cannot convert: no valid IP addresses")
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_result_to_json(const struct cni_result *res, const char *version, char **ret,
		       struct cni_err *err);

/**
 * cni_result_from_object() - cni_result_parse() on an already parsed value (common/cni only)
 * @o: result object
 * @version: version to read it as when it carries no cniVersion
 * @ret: result, written only on success
 * @err: filled on failure
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_result_from_object(struct json_object *o, const char *version, struct cni_result *ret,
			   struct cni_err *err);
