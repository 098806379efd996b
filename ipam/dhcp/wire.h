/* The plugin's requests to the daemon and its answers, over the daemon's unix socket */
#pragma once

#include <limits.h>
#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "ipam/dhcp/packet.h"

struct cni_err;
struct cni_result;

enum dhcp_op {
	DHCP_OP_ADD,
	DHCP_OP_DEL,
	DHCP_OP_CHECK,
	DHCP_OP_STATUS,
};

/* Options one config may provide; more than a DHCP message could carry is refused. */
#define DHCP_PROVIDE_MAX 32
/* Upstream's client ID is cut to what option 61 can hold after its type byte. */
#define DHCP_CLIENT_ID_MAX 254
/* Largest request or answer; a result of DHCP_ROUTES_MAX routes is well below. */
#define DHCP_WIRE_MAX (256u * 1024u)

/* One request: the plugin and the daemon of the same build speak it (docs/dhcp.md). */
struct dhcp_req {
	enum dhcp_op op;
	char client_id[DHCP_CLIENT_ID_MAX + 1];
	char netns[PATH_MAX];
	char ifname[IF_NAMESIZE];
	struct dhcp_opt opts[DHCP_PROVIDE_MAX];
	size_t n_opts;
	uint8_t params[255];
	size_t n_params;
	int priority;
};

/**
 * dhcp_wire_req_encode() - a request as the JSON text sent
 * @req: request
 * @ret: malloc'ed text
 *
 * Return: 0, or -ENOMEM.
 */
int dhcp_wire_req_encode(const struct dhcp_req *req, char **ret);

/**
 * dhcp_wire_req_decode() - a request read by the daemon
 * @text: NUL-terminated JSON
 * @len: its length
 * @ret: request, written only on success
 * @err: code 6 or 7 naming what is wrong
 *
 * Return: 0, or negative errno.
 */
int dhcp_wire_req_decode(const char *text, size_t len, struct dhcp_req *ret, struct cni_err *err);

/**
 * dhcp_wire_answer_encode() - the daemon's answer: a result (NULL for none) or an error
 * @res: result, or NULL
 * @err: the error when @r < 0
 * @r: the request's return
 * @ret: malloc'ed text
 *
 * Return: 0, or -ENOMEM.
 */
int dhcp_wire_answer_encode(const struct cni_result *res, const struct cni_err *err, int r,
			    char **ret);

/**
 * dhcp_wire_answer_decode() - the answer read by the plugin
 * @text: NUL-terminated JSON
 * @len: its length
 * @ret: the result when the answer has one (release with cni_result_free())
 * @err: the daemon's error as it gave it, or code 999 for an answer that is not one
 *
 * Return: 0 for success, negative errno for the daemon's error or a broken answer.
 */
int dhcp_wire_answer_decode(const char *text, size_t len, struct cni_result *ret,
			    struct cni_err *err);

/**
 * dhcp_wire_send() - write all of a message and end the writing side
 * @fd: connected socket
 * @text: message
 *
 * Return: 0, or negative errno.
 */
int dhcp_wire_send(int fd, const char *text);

/**
 * dhcp_wire_recv() - read a message to the peer's end of writing
 * @fd: connected socket
 * @ret: malloc'ed, NUL-terminated
 * @ret_len: its length
 *
 * Return: 0, -EFBIG past DHCP_WIRE_MAX, or negative errno.
 */
int dhcp_wire_recv(int fd, char **ret, size_t *ret_len);
