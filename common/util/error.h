/* Errors: the CNI codes and the record filled at the failure site */
#pragma once

#include <stdio.h>

enum cni_code {
	CNI_OK = 0,
	CNI_ERR_INCOMPATIBLE_VERSION = 1,
	CNI_ERR_UNSUPPORTED_FIELD = 2,
	CNI_ERR_UNKNOWN_CONTAINER = 3,
	CNI_ERR_INVALID_ENV = 4,
	CNI_ERR_IO = 5,
	CNI_ERR_DECODE = 6,
	CNI_ERR_INVALID_CONFIG = 7,
	CNI_ERR_INVALID_NETNS = 8,
	CNI_ERR_TRY_AGAIN = 11,
	CNI_ERR_STATUS_UNAVAILABLE = 50,
	CNI_ERR_STATUS_LIMITED = 51,
	/* Plugin-specific codes, documented in docs/errors.md. */
	CNI_ERR_KERNEL = 100,      /* a netlink or sysctl operation failed */
	CNI_ERR_IPAM = 101,        /* the IPAM plugin could not be run or its result is unusable */
	CNI_ERR_NOT_FOUND = 102,   /* a device the config names does not exist */
	CNI_ERR_CHECK_FAILED = 103, /* CHECK found the attachment differs from prevResult */
	CNI_ERR_NAME_TAKEN = 104,  /* host-device DEL: a host link has the device's original name */
	CNI_ERR_NO_FREE_ADDRESS = 110, /* IPAM: no free address left in the pool's range (set) */
	CNI_ERR_ADDRESS_TAKEN = 111,   /* IPAM: the requested address is already reserved */
	CNI_ERR_POOL_NOT_FOUND = 112,  /* nv-ipam: the node pool file has no such pool */
	CNI_ERR_INTERNAL = 999,    /* out of memory and other internal failures */
};

struct cni_err {
	int code;
	int errnum;                /* the negative errno cni_err_set() was given */
	char msg[1024];
	char details[2048];
};

/**
 * cni_err_set() - record a failure unless one is already recorded
 * @err: error to fill (the first failure wins, so undo steps never mask it)
 * @code: CNI error code
 * @r: negative errno to return
 * @fmt: message
 *
 * Return: @r, so callers can write "return cni_err_set(...)".
 */
int cni_err_set(struct cni_err *err, int code, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/**
 * cni_err_details() - set the details of the recorded failure
 * @err: error whose details are replaced
 * @fmt: details text
 */
void cni_err_details(struct cni_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * cni_err_prefix() - put context in front of the recorded message ("<context>: <msg>")
 * @err: error whose message is extended (nothing happens when none is recorded)
 * @r: negative errno to return
 * @fmt: the context
 *
 * Return: @r.
 */
int cni_err_prefix(struct cni_err *err, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * cni_err_code() - change the code of the recorded failure
 * @err: error (nothing happens when none is recorded)
 * @code: the new CNI error code
 * @r: negative errno to return
 *
 * For callers that know better what a failure means than the place that
 * recorded it (an unparsable file of the node is a config problem, not a
 * decode failure of stdin).
 *
 * Return: @r.
 */
int cni_err_code(struct cni_err *err, int code, int r);
