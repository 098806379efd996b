/* dhcp IPAM plugin: addresses leased from a DHCP server by the dhcp daemon */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cni/ctx.h"
#include "common/cni/plugin.h"
#include "common/cni/result.h"
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "ipam/dhcp/config.h"
#include "ipam/dhcp/dhcp.h"
#include "ipam/dhcp/wire.h"

/*
 * The socket a config names is below the node's socket directories and no link leads
 * there: a network config cannot make this root process talk to another daemon's socket.
 */
static int daemon_connect(const char *path, int *ret_fd, struct cni_err *err)
{
	_cleanup_close_ int pfd = -1, fd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int r;

	r = trust_open_socket(TRUST_SOCKET, "daemonSocketPath", path, &pfd, err);
	if (r == -ENOENT)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, r,
				   "error dialing DHCP daemon: dial unix %.256s: connect: no such file or "
				   "directory", path);
	if (r < 0)
		return r;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -errno,
				   "error dialing DHCP daemon: dial unix %.256s: connect: %s", path,
				   strerror(errno));
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int daemon_call(const struct cni_ctx *ctx, enum dhcp_op op, struct cni_result *ret,
		       struct cni_err *err)
{
	_cleanup_free_ char *text = NULL, *answer = NULL;
	_cleanup_close_ int fd = -1;
	struct dhcp_req req;
	const char *path = NULL;
	size_t len = 0;
	int r;

	if ((r = cni_plugin_setup_ipam_logging(ctx, "dhcp", err)) < 0 ||
	    (r = dhcp_config_load(ctx, op, &req, &path, err)) < 0 ||
	    (r = daemon_connect(path, &fd, err)) < 0)
		return r;
	if (dhcp_wire_req_encode(&req, &text) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if ((r = dhcp_wire_send(fd, text)) < 0 || (r = dhcp_wire_recv(fd, &answer, &len)) < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "DHCP daemon at %.256s: %s", path, strerror(-r));
	if (len == 0)
		return cni_err_set(err, CNI_ERR_IO, -EPIPE,
				   "DHCP daemon at %.256s closed without an answer", path);
	return dhcp_wire_answer_decode(answer, len, ret, err);
}

static int dhcp_add(const struct cni_ctx *ctx, struct cni_result *ret, struct cni_err *err)
{
	int r = daemon_call(ctx, DHCP_OP_ADD, ret, err);

	if (r >= 0 && ret->n_ips == 0)
		r = cni_err_set(err, CNI_ERR_INTERNAL, -EPROTO, "DHCP daemon answered without an address");
	if (r >= 0)
		log_info("ADD %s/%s: %zu address(es), %zu route(s)", ctx->env.container_id,
			 ctx->env.ifname, ret->n_ips, ret->n_routes);
	return r;
}

/* The daemon forgets the lease, releasing it; one it does not hold is no error. */
static int dhcp_del(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_result none = { 0 };
	int r = daemon_call(ctx, DHCP_OP_DEL, &none, err);

	cni_result_free(&none);
	return r;
}

/* As upstream's: the daemon is asked for the lease again (a lease it lacks is acquired). */
static int dhcp_check(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_result res = { 0 };
	int r = daemon_call(ctx, DHCP_OP_CHECK, &res, err);

	cni_result_free(&res);
	return r;
}

/* Ready when the daemon answers: without it no ADD can succeed. */
static int dhcp_status(const struct cni_ctx *ctx, struct cni_err *err)
{
	struct cni_result none = { 0 };
	int r = daemon_call(ctx, DHCP_OP_STATUS, &none, err);

	cni_result_free(&none);
	if (r < 0 && err->code == CNI_ERR_TRY_AGAIN)
		err->code = CNI_ERR_STATUS_UNAVAILABLE;
	return r;
}

/* Nothing to collect beside the daemon's leases, which only DEL ends (as upstream). */
static int dhcp_gc(const struct cni_ctx *ctx, struct cni_err *err)
{
	(void)ctx;
	(void)err;
	return 0;
}

const struct cni_plugin dhcp_plugin = {
	.name = "dhcp",
	.summary = "dhcp: addresses leased from a DHCP server by the dhcp daemon (dhcp daemon -h)",
	.keys = dhcp_config_keys,
	.ipam = true,
	.add = dhcp_add,
	.del = dhcp_del,
	.check = dhcp_check,
	.status = dhcp_status,
	.gc = dhcp_gc,
};
