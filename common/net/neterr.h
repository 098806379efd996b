/* The kernel's error of the last netlink request: its extended-ack text, CNI errors carrying it */
#pragma once

struct cni_err;

/**
 * net_ack_set() - keep the kernel's text of a failed request for net_err_set()
 * @text: NLMSGERR_ATTR_MSG as the kernel sent it; truncated to the recorder's size
 */
void net_ack_set(const char *text);

/**
 * net_ack_clear() - forget the text of an earlier request (every request starts with it)
 */
void net_ack_clear(void);

/**
 * net_err_set() - record a failed kernel request, with the kernel's text as details
 * @err: error to fill (the first failure wins, as with cni_err_set())
 * @code: CNI error code
 * @r: negative errno to return
 * @fmt: message
 *
 * Return: @r.
 */
int net_err_set(struct cni_err *err, int code, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/**
 * net_err_op() - net_err_set() with code 100 for an operation on a named link:
 *                "<what> \"<name>\": <strerror>"
 * @err: error to fill
 * @r: negative errno of the failure (returned)
 * @what: the operation, "failed to delete"
 * @name: the link
 *
 * Return: @r.
 */
int net_err_op(struct cni_err *err, int r, const char *what, const char *name);
