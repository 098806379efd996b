/* A small HTTP server (libmicrohttpd) answering by path: probes, metrics, an admission webhook */
#pragma once

#include <stddef.h>
#include <sys/socket.h>

#include "ipam/nv-ipam/serve/slots.h"

struct cni_err;
struct serve;

struct serve_reply {
	int status;               /* 200 unless the handler says otherwise */
	const char *content_type; /* NULL: text/plain; charset=utf-8 */
	char *body;               /* malloc'ed (the server frees it); NULL: empty */
	size_t len;
};

/*
 * A handler runs on one of the server's threads, several at once: what it reads must be
 * safe to read there, and from two of them at the same time.
 */
struct serve_route {
	const char *path;
	void (*handle)(void *ctx, struct serve_reply *reply); /* GET and HEAD */
	void *ctx;
};

/* A path answered to POST, with the request's whole body. */
struct serve_post_route {
	const char *path;
	void (*post)(void *ctx, const char *body, size_t len, struct serve_reply *reply);
	void *ctx;
	size_t max_body;          /* a longer body is answered 413 without a call */
};

/**
 * serve_parse_address() - a bind address as controller-runtime's flags take them
 * @addr: ":8081" (every address, IPv6 and IPv4), "127.0.0.1:8080", "[::1]:8080", "0" (off)
 * @ret: the socket address; for ":PORT", the IPv6 any address
 * @ret_len: its length, 0 for "0"
 *
 * Return: 0 on success, -EINVAL for anything else.
 */
int serve_parse_address(const char *addr, struct sockaddr_storage *ret, socklen_t *ret_len);

/**
 * serve_start() - listen and answer on a thread of the server's own
 * @addr: bind address (serve_parse_address()); "0" starts nothing
 * @routes: paths and their handlers (kept: they must outlive the server)
 * @n: their number
 * @ret: the server, NULL for "0"; stop it with serve_stop()
 * @err: code 7 for a bad address, 5 when it cannot listen (the address in use)
 *
 * GET and HEAD of a route run its handler; any other path is 404, any other method 405.
 * Each request has a deadline (5 s from its connection's accept, or from the previous
 * request's end on a kept-alive one), one address holds at most a quarter of the
 * connections, a full server gives a slot to a client holding fewer than the heaviest
 * (slots_admit()), the connections of a process's servers fit its descriptor limit with
 * room to spare, and a pool of threads answers (docs/security.md).
 *
 * Return: 0 on success, negative errno on failure.
 */
int serve_start(const char *addr, const struct serve_route *routes, size_t n, struct serve **ret,
		struct cni_err *err);

/**
 * serve_start_tls() - a server over TLS, with a certificate and key from PEM files, that
 *                     answers POST (an admission webhook's requests)
 * @addr: bind address
 * @routes: paths answered to POST (kept: they must outlive the server)
 * @n: their number
 * @cert_file: the serving certificate (and its chain), PEM ("tls.crt" of a Secret)
 * @key_file: its private key, PEM ("tls.key")
 * @ret: the server, NULL for "0"
 * @err: as serve_start(), code 5 naming a file that cannot be read or a pair TLS refuses
 *
 * As serve_start()'s, with a deadline of 10 s (a TLS handshake and a body of a few MiB);
 * a body past its first 16 KiB draws on a budget of the whole server (503 when spent).
 *
 * Return: 0 on success, negative errno on failure.
 */
int serve_start_tls(const char *addr, const struct serve_post_route *routes, size_t n,
		    const char *cert_file, const char *key_file, struct serve **ret,
		    struct cni_err *err);

/**
 * serve_reload_tls() - serve a new certificate and key when their files changed (a Secret
 *                      mounted in a pod is replaced when cert-manager renews it)
 * @s: a server of serve_start_tls() (any other: nothing to do)
 * @err: why the new pair is not served
 *
 * A server with the new pair starts on (a copy of) the listening socket beside the old one,
 * which then stops taking connections and finishes what it answers: no moment of not
 * listening. One that cannot start leaves the old one serving: a pair TLS refuses (its
 * error returned once), or no descriptor, thread or memory to spare (tried again at the
 * next call).
 *
 * Return: 1 when the new pair is served, 0 when the files did not change, negative errno.
 */
int serve_reload_tls(struct serve *s, struct cni_err *err);

/**
 * serve_connections() - what the server's connection slots did (for /metrics)
 * @s: server (NULL: all zero, a server not started)
 * @ret: the counts
 */
void serve_connections(struct serve *s, struct slots_stats *ret);

/**
 * serve_port() - the port listened on (the kernel's choice for port 0)
 * @s: server
 *
 * Return: the port.
 */
int serve_port(const struct serve *s);

/**
 * serve_address() - a bind address as bound: its port the one listened on
 * @addr: the address as given ("127.0.0.1:0", ":8080")
 * @s: the server listening on it (NULL: @addr as it is)
 * @buf: room for the text
 * @len: its size
 *
 * For the log line that says where a server is: with port 0 the kernel chose the port.
 *
 * Return: @buf, or @addr when there is nothing to change.
 */
const char *serve_address(const char *addr, const struct serve *s, char *buf, size_t len);

/**
 * serve_stop() - stop answering and release the server
 * @s: server (NULL does nothing)
 */
void serve_stop(struct serve *s);
