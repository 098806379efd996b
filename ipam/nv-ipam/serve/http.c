/* A small HTTP server (libmicrohttpd) answering GET by path: probes and metrics */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "common/cni/error.h"
#include "ipam/nv-ipam/serve/http.h"

/* Probes and a scraper, not a web site: a few connections, none kept long. */
#define CONNECTION_LIMIT 16
#define CONNECTION_TIMEOUT_S 10

struct serve {
	struct MHD_Daemon *daemon;
	const struct serve_route *routes;
	size_t n_routes;
	int port;
};

static bool parse_port(const char *s, in_port_t *ret)
{
	char *end;
	long v;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 5)
		return false;
	v = strtol(s, &end, 10);
	if (v > 65535)
		return false;
	*ret = htons((in_port_t)v);
	return true;
}

int serve_parse_address(const char *addr, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	const char *colon = strrchr(addr, ':');
	char host[64];
	in_port_t port;
	size_t hlen;

	memset(ret, 0, sizeof(*ret));
	if (strcmp(addr, "0") == 0) {
		*ret_len = 0;
		return 0;
	}
	if (!colon || !parse_port(colon + 1, &port))
		return -EINVAL;
	hlen = (size_t)(colon - addr);
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, addr, hlen);
	host[hlen] = '\0';
	if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
		memmove(host, host + 1, hlen - 2);
		host[hlen - 2] = '\0';
	} else if (strchr(host, ':')) {
		return -EINVAL; /* an IPv6 address needs its brackets */
	}
	if (!*host || strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ret;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = port;
		if (*host && inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return -EINVAL;
		if (!*host)
			s6->sin6_addr = in6addr_any;
		*ret_len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ret;

		s4->sin_family = AF_INET;
		s4->sin_port = port;
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return -EINVAL;
		*ret_len = sizeof(*s4);
	}
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *conn, int status, const char *type, char *body,
			     size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = MHD_create_response_from_buffer(len, body ? body : (char *)"",
					       body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				      type ? type : "text/plain; charset=utf-8");
	r = MHD_queue_response(conn, (unsigned int)status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct serve *s = cls;
	static int first;

	(void)version;
	(void)upload_data;
	/* The first call only announces the request: answer on the second. */
	if (!*req_cls) {
		*req_cls = &first;
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply(conn, 405, NULL, strdup("method not allowed\n"), 19);
	for (size_t i = 0; i < s->n_routes; i++) {
		struct serve_reply r = { .status = 200 };

		if (strcmp(url, s->routes[i].path) != 0)
			continue;
		s->routes[i].handle(s->routes[i].ctx, &r);
		return reply(conn, r.status, r.content_type, r.body, r.body ? r.len : 0);
	}
	return reply(conn, 404, NULL, strdup("not found\n"), 10);
}

int serve_start(const char *addr, const struct serve_route *routes, size_t n, struct serve **ret,
		struct cni_err *err)
{
	struct sockaddr_storage sa;
	socklen_t len;
	struct serve *s;
	/* ITC: a stop wakes the server's thread at once instead of at its next timeout. */
	unsigned int flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC;
	const union MHD_DaemonInfo *info;

	*ret = NULL;
	if (serve_parse_address(addr, &sa, &len) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "bind address \"%.64s\" is not [HOST]:PORT or 0", addr);
	if (len == 0)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	s->routes = routes;
	s->n_routes = n;
	if (sa.ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		/* ":PORT" listens on IPv4 too, as Go's listener does. */
		if (IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&sa)->sin6_addr))
			flags |= MHD_USE_DUAL_STACK;
	}
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, &sa,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONNECTION_LIMIT,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT_S,
				     MHD_OPTION_END);
	if (!s->daemon) {
		free(s);
		return cni_err_set(err, CNI_ERR_IO, -EADDRINUSE,
				   "cannot listen on %s (the address in use, or not this host's)", addr);
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	*ret = s;
	return 0;
}

int serve_port(const struct serve *s)
{
	return s->port;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->daemon);
	free(s);
}
