/* The validating webhook's rules for IPPool and CIDRPool objects: every broken field, by path */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/* What is wrong with one field, as Kubernetes words a field error. */
enum validate_kind {
	VALIDATE_INVALID,   /* "PATH: Invalid value: VALUE: DETAIL" */
	VALIDATE_REQUIRED,  /* "PATH: Required value: DETAIL" */
	VALIDATE_FORBIDDEN, /* "PATH: Forbidden: DETAIL" */
};

/*
 * A hostile object can hold errors by the hundred thousand: the first few are kept (each
 * of bounded length, a value shown by its first bytes), the rest only counted, so that a
 * denial, a log line and an Event stay small whatever the object.
 */
#define VALIDATE_ERRORS_KEPT 10
/* No message of validate_message() is longer (the terminator not counted). */
#define VALIDATE_MESSAGE_MAX 16384

/* The field errors of one object, in the order the reference finds them. */
struct validate_result {
	char **errors; /* "spec.subnet: Invalid value: \"10.0.0.0/33\": is not a valid CIDR" */
	size_t n;      /* at most VALIDATE_ERRORS_KEPT, none repeated; 0 when the object is valid */
	size_t more;   /* errors found past those kept */
};

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

/**
 * validate_message() - the errors as one message, as Kubernetes aggregates them: the error
 *                      itself when there is one, "[e1, e2, ...]" for several, and past the
 *                      errors kept "[e1, ..., e10, and N more errors]"
 * @res: errors (at least one)
 *
 * The message is at most VALIDATE_MESSAGE_MAX bytes long.
 *
 * Return: malloc'ed text, NULL when out of memory.
 */
char *validate_message(const struct validate_result *res);

/**
 * validate_result_free() - release the errors and zero the result
 * @res: result
 */
void validate_result_free(struct validate_result *res);
