/* The validating webhook's rules for IPPool and CIDRPool objects: every broken field, by path */
#pragma once

#include "ipam/nv-ipam/controller/field_errors.h"

struct json_object;

/**
 * validate_ippool() - an IPPool's errors, as the reference's webhook and controller judge one
 * @pool: the object (metadata.name, spec)
 * @ret: its errors, none when valid; release with validate_result_free()
 *
 * The name is a CNI network name; subnet a CIDR; perNodeBlockSize at least 1 and no more
 * than the subnet's usable addresses (2^n-2 for IPv4, 2^n-1 for IPv6, 2 for /31 and /127,
 * 1 for /32 and /128); exclusions inside the subnet, start before end; perNodeExclusions
 * inside a block; gateway an address inside the subnet; nodeSelector a valid NodeSelector;
 * defaultGateway and routes only with a gateway; routes CIDRs of the subnet's family, no
 * default route with defaultGateway. A member of the wrong JSON type is an error of its own.
 *
 * Return: 0, or -ENOMEM.
 */
int validate_ippool(struct json_object *pool, struct validate_result *ret);

/**
 * validate_cidrpool() - a CIDRPool's errors, as the reference's webhook and controller judge one
 * @pool: the object
 * @ret: its errors; release with validate_result_free()
 *
 * The name is a CNI network name; cidr a CIDR without host bits; perNodeNetworkPrefix
 * between the cidr's length and the address width; gatewayIndex an index of a usable
 * address of a node's prefix (0 only for /31, /32, /127, /128); exclusions inside cidr;
 * perNodeExclusions inside a node's prefix; staticAllocations of right-sized prefixes
 * inside cidr, each node and prefix once, a gateway inside its prefix; nodeSelector,
 * defaultGateway and routes as for an IPPool, with gatewayIndex in the gateway's place.
 *
 * Return: 0, or -ENOMEM.
 */
int validate_cidrpool(struct json_object *pool, struct validate_result *ret);
