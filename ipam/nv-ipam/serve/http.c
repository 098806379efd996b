/*
 * A small HTTP server (libmicrohttpd) answering by path: probes, metrics, an admission webhook
 *
 * Over TLS the certificate and key come from files that a Secret volume replaces when the
 * certificate is renewed: a reload hands the listening socket to a server with the new pair.
 *
 * Clients that connect and then send nothing, or a byte now and then, must not silence the
 * probes: each request has a deadline from the moment its connection is accepted (or its
 * previous request on the connection ended) to its answer, whatever trickles in meanwhile
 * (deadline.c); the connections are shared fairly among client subnets and addresses, so
 * that no set of clients can hold every one (slots.c); a pool of threads answers, so that
 * one slow handler or TLS handshake does not hold up the others.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/serve/deadline.h"
#include "ipam/nv-ipam/serve/http.h"
#include "ipam/nv-ipam/serve/slots.h"

/*
 * Kubelet gives a probe 1 s by default and the API server a webhook 10 s: a request not
 * answered by then has failed for its client anyway. The webhook's allows for a TLS
 * handshake and a body of a few MiB.
 */
#define DEADLINE_MS 5000
#define DEADLINE_TLS_MS 10000
/*
 * Kubelet probes from the node's address, Prometheus and the API servers from theirs, with
 * a few connections each: one address gets a quarter of the connections at most, far more
 * than kubelet's handful, so that dozens of slow ones from kubelet's own address (the
 * node's other processes) still leave it room. When all are taken, a client holding fewer
 * takes one from the heaviest (slots.c): a few addresses cannot lock the probes out.
 */
#define CONNECTION_LIMIT 512
#define PER_ADDRESS_CONNECTION_LIMIT 128
/*
 * libmicrohttpd's own limit, above ours: the connections slots.c refused or evicted are
 * shut down and still open until their thread closes them, and it must never be the one
 * that turns a newcomer away (it would, split across its threads, by thread).
 */
#define SERVER_CONNECTION_LIMIT (2 * CONNECTION_LIMIT)
/*
 * File descriptors a daemon keeps for what is not a client (its files, its connections to
 * the API server, a reload's second server); the rest is shared by its servers, at most
 * this many, so that no number of clients takes the last one. Below 3 x 1024 + 256 the
 * limits above shrink in proportion (a node's usual limit is far above).
 */
#define FD_RESERVE 256
#define SERVERS_PER_PROCESS 3
#define SERVER_CONNECTION_FLOOR 16
/* What a connection may hold of request headers and buffers (libmicrohttpd's default). */
#define CONNECTION_MEMORY_BYTES (32u * 1024)
/*
 * Request bodies held at once by one server: each its first BODY_FREE_BYTES (a pool's
 * review is a few KiB: never refused), what is beyond from a budget of a few of the largest
 * a route takes (a few connections that send 4 MiB slowly hold no more than that).
 */
#define BODY_FREE_BYTES (16u * 1024)
#define BODY_BUDGET_BYTES (16u << 20)
/* Handlers and TLS handshakes run on these; a connection stays on the thread that took it. */
#define THREAD_POOL_SIZE 4
/* A certificate chain or a key is a few KiB. */
#define PEM_MAX_BYTES (1u << 20)
/* What an old server gets to finish after a reload (a webhook answers in milliseconds). */
#define RELOAD_GRACE_MS 200

/* One running daemon, with the PEM text it was started with (kept while it runs). */
struct instance {
	struct MHD_Daemon *daemon;
	char *cert_pem;
	char *key_pem;
	struct stat cert_st, key_st; /* the files as read */
};

struct serve {
	struct instance cur;
	const struct serve_route *routes;
	size_t n_routes;
	const struct serve_post_route *posts;
	size_t n_posts;
	int port;
	bool tls;
	char *cert_file;
	char *key_file;
	struct stat refused_cert, refused_key; /* the last pair refused: told once */
	struct deadline *deadline;
	struct slots *slots;
	unsigned int connection_limit; /* libmicrohttpd's, per server instance */
	struct sockaddr_storage sa;    /* the bind address, to listen on again */
	size_t body_bytes; /* held by requests under way, atomic */
};

/* A connection's slot and deadline, from its start to its close. */
struct conn {
	struct slot *slot;
	struct deadline_conn *deadline;
};

/* A request under way: its body, as it arrives. */
struct request {
	struct text_buf body;
	size_t charged;    /* of body_bytes */
	int refused;       /* the status that answers instead of the route: 413, 503 */
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

static const struct serve_route *route_of(const struct serve *s, const char *url)
{
	for (size_t i = 0; i < s->n_routes; i++)
		if (strcmp(url, s->routes[i].path) == 0)
			return &s->routes[i];
	return NULL;
}

static const struct serve_post_route *post_route_of(const struct serve *s, const char *url)
{
	for (size_t i = 0; i < s->n_posts; i++)
		if (strcmp(url, s->posts[i].path) == 0)
			return &s->posts[i];
	return NULL;
}

/* Bytes of a body counted against the server's budget, if they fit in it. */
static bool budget_take(struct serve *s, size_t n)
{
	if (__atomic_add_fetch(&s->body_bytes, n, __ATOMIC_RELAXED) <= BODY_BUDGET_BYTES)
		return true;
	__atomic_sub_fetch(&s->body_bytes, n, __ATOMIC_RELAXED);
	return false;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct serve *s = cls;
	const struct serve_route *route = route_of(s, url);
	const struct serve_post_route *post = post_route_of(s, url);
	struct serve_reply r = { .status = 200 };
	struct request *req = *req_cls;

	(void)version;
	/* The first call only announces the request: the body (if any) and the answer follow. */
	if (!req) {
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		*req_cls = req;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t max = post ? post->max_body : 0, n = *upload_data_size;

		if (req->refused) {
			/* The rest of a body not kept is read and dropped. */
		} else if (req->body.len + n > max) {
			req->refused = 413;
		} else {
			size_t over = req->body.len + n > BODY_FREE_BYTES
					      ? req->body.len + n - BODY_FREE_BYTES - req->charged : 0;

			if (over && !budget_take(s, over)) {
				req->refused = 503;
			} else {
				req->charged += over;
				text_buf_add(&req->body, upload_data, n);
			}
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!route && !post)
		return reply(conn, 404, NULL, strdup("not found\n"), 10);
	if (strcmp(method, "POST") == 0 && post) {
		if (req->refused == 413)
			return reply(conn, 413, NULL, strdup("request body too large\n"), 23);
		if (req->refused == 503)
			return reply(conn, 503, NULL, strdup("too many request bodies at once\n"), 32);
		text_buf_putc(&req->body, '\0');
		if (req->body.oom)
			return reply(conn, 500, NULL, strdup("out of memory\n"), 14);
		post->post(post->ctx, req->body.data, req->body.len - 1, &r);
	} else if ((strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) && route) {
		route->handle(route->ctx, &r);
	} else {
		return reply(conn, 405, NULL, strdup("method not allowed\n"), 19);
	}
	return reply(conn, r.status, r.content_type, r.body, r.body ? r.len : 0);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct serve *s = cls;
	struct request *req = *req_cls;
	const union MHD_ConnectionInfo *info;

	if (req) {
		__atomic_sub_fetch(&s->body_bytes, req->charged, __ATOMIC_RELAXED);
		text_buf_free(&req->body);
		free(req);
		*req_cls = NULL;
	}
	/* A connection kept alive has the same time again for its next request. */
	info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && info && info->socket_context)
		deadline_rearm(s->deadline, ((struct conn *)info->socket_context)->deadline);
}

static socklen_t sockaddr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
	       : sa->sa_family == AF_INET ? sizeof(struct sockaddr_in)
					  : sizeof(sa->sa_family);
}

/*
 * Each connection takes a slot (or is shut down at once) and is watched from its accept
 * to its close (before its socket is closed).
 */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct serve *s = cls;
	const union MHD_ConnectionInfo *fd, *addr;
	struct conn *c = *socket_context;

	if (toe != MHD_CONNECTION_NOTIFY_STARTED) {
		if (c) {
			deadline_remove(s->deadline, c->deadline);
			slots_release(s->slots, c->slot);
			free(c);
		}
		*socket_context = NULL;
		return;
	}
	fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fd)
		return;
	c = calloc(1, sizeof(*c));
	if (!c || !addr) {
		free(c);
		(void)shutdown(fd->connect_fd, SHUT_RDWR);
		return;
	}
	c->slot = slots_admit(s->slots, fd->connect_fd, addr->client_addr,
			      sockaddr_len(addr->client_addr));
	/* Without a slot its socket is shut down already: its end is near, no deadline. */
	if (c->slot)
		c->deadline = deadline_add(s->deadline, fd->connect_fd);
	*socket_context = c;
}

/*
 * A daemon on @sa, or on @listen_fd when it is not -1 (a reload), or on no socket when
 * @sa is NULL too (a trial of the pair and of the resources a server takes), TLS with
 * @in's PEM text when it has some.
 */
static struct MHD_Daemon *daemon_start(struct serve *s, const struct sockaddr_storage *sa,
				       int listen_fd, const struct instance *in)
{
	/*
	 * ITC: a stop wakes the server's threads at once instead of at their next timeout. Poll
	 * rather than epoll: with a pool, epoll's quiesce (a reload) can race a thread at its
	 * share of the connections and abort the process.
	 */
	unsigned int flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC;
	struct MHD_OptionItem opts[9];
	size_t n = 0;

	if (sa && sa->ss_family == AF_INET6) {
		flags |= MHD_USE_IPv6;
		/* ":PORT" listens on IPv4 too, as Go's listener does. */
		if (IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr))
			flags |= MHD_USE_DUAL_STACK;
	}
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, THREAD_POOL_SIZE, NULL };
	if (in->cert_pem) {
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, in->key_pem };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, in->cert_pem };
	}
	if (listen_fd >= 0)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL };
	else if (sa)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)sa };
	else
		flags |= MHD_USE_NO_LISTEN_SOCKET;
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	/* No inactivity timeout of libmicrohttpd's: the deadline is shorter and always holds. */
	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
				MHD_OPTION_CONNECTION_LIMIT, s->connection_limit,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY_BYTES,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
				MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
}

static void instance_stop(struct instance *in)
{
	if (in->daemon)
		MHD_stop_daemon(in->daemon);
	free(in->cert_pem);
	free(in->key_pem);
	*in = (struct instance){ 0 };
}

/* The PEM pair read into @ret; code 5 naming the file that cannot be read. */
static int read_pair(const struct serve *s, struct instance *ret, struct cni_err *err)
{
	struct instance in = { 0 };
	size_t len;
	int r;

	r = file_read(s->cert_file, PEM_MAX_BYTES, &in.cert_pem, &len);
	if (r == 0 && stat(s->cert_file, &in.cert_st) < 0)
		r = -errno;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read the certificate %s: %s", s->cert_file,
				   strerror(-r));
	r = file_read(s->key_file, PEM_MAX_BYTES, &in.key_pem, &len);
	if (r == 0 && stat(s->key_file, &in.key_st) < 0)
		r = -errno;
	if (r < 0) {
		instance_stop(&in);
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read the key %s: %s", s->key_file,
				   strerror(-r));
	}
	*ret = in;
	return 0;
}

/* libmicrohttpd's connection limit: SERVER_CONNECTION_LIMIT, or a share of the fd limit. */
static unsigned int server_connection_limit(void)
{
	struct rlimit rl;
	rlim_t share;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return SERVER_CONNECTION_LIMIT;
	share = rl.rlim_cur > FD_RESERVE ? (rl.rlim_cur - FD_RESERVE) / SERVERS_PER_PROCESS : 0;
	if (share < SERVER_CONNECTION_FLOOR)
		return SERVER_CONNECTION_FLOOR;
	return share > SERVER_CONNECTION_LIMIT ? SERVER_CONNECTION_LIMIT : (unsigned int)share;
}

static int start(const char *addr, const struct serve_route *routes, size_t n,
		 const struct serve_post_route *posts, size_t n_posts, const char *cert_file,
		 const char *key_file, struct serve **ret, struct cni_err *err)
{
	struct sockaddr_storage sa;
	socklen_t len;
	struct serve *s;
	const union MHD_DaemonInfo *info;
	int r;

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
	s->posts = posts;
	s->n_posts = n_posts;
	if (cert_file) {
		s->tls = true;
		s->cert_file = strdup(cert_file);
		s->key_file = strdup(key_file);
		if (!s->cert_file || !s->key_file) {
			serve_stop(s);
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
		r = read_pair(s, &s->cur, err);
		if (r < 0) {
			serve_stop(s);
			return r;
		}
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			serve_stop(s);
			return cni_err_set(err, CNI_ERR_IO, -ENOTSUP, "libmicrohttpd was built without TLS");
		}
	}
	s->connection_limit = server_connection_limit();
	r = deadline_new(cert_file ? DEADLINE_TLS_MS : DEADLINE_MS, &s->deadline);
	/* The slots: half of libmicrohttpd's limit (CONNECTION_LIMIT), an address a quarter. */
	if (r == 0)
		r = slots_new(s->connection_limit / 2,
			      s->connection_limit / 2 * PER_ADDRESS_CONNECTION_LIMIT / CONNECTION_LIMIT,
			      &s->slots);
	if (r < 0) {
		serve_stop(s);
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "cannot set the server's deadlines and slots up: %s",
				   strerror(-r));
	}
	s->sa = sa;
	s->cur.daemon = daemon_start(s, &s->sa, -1, &s->cur);
	if (!s->cur.daemon) {
		serve_stop(s);
		return cni_err_set(err, CNI_ERR_IO, -EADDRINUSE,
				   cert_file ? "cannot listen on %s (the address in use, or not this host's), or "
					       "TLS refuses the certificate and key"
					     : "cannot listen on %s (the address in use, or not this host's)", addr);
	}
	info = MHD_get_daemon_info(s->cur.daemon, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	*ret = s;
	return 0;
}

int serve_start(const char *addr, const struct serve_route *routes, size_t n, struct serve **ret,
		struct cni_err *err)
{
	return start(addr, routes, n, NULL, 0, NULL, NULL, ret, err);
}

int serve_start_tls(const char *addr, const struct serve_post_route *routes, size_t n,
		    const char *cert_file, const char *key_file, struct serve **ret,
		    struct cni_err *err)
{
	return start(addr, NULL, 0, routes, n, cert_file, key_file, ret, err);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int serve_reload_tls(struct serve *s, struct cni_err *err)
{
	struct instance next = { 0 }, old;
	struct MHD_Daemon *trial;
	struct stat cst, kst;
	bool told;
	int fd;

	if (!s || !s->tls)
		return 0;
	if (s->cur.daemon && stat(s->cert_file, &cst) == 0 && stat(s->key_file, &kst) == 0 &&
	    same_file(&cst, &s->cur.cert_st) && same_file(&kst, &s->cur.key_st))
		return 0;
	if (read_pair(s, &next, err) < 0)
		return -EIO;
	/*
	 * First a server with the new pair on no socket, as many threads and descriptors as
	 * the real one takes: one that cannot start (TLS refuses the pair; no descriptor or
	 * thread left) leaves the old one serving, untouched. libmicrohttpd must never be
	 * given the listening socket for a start that may fail: on its way out it shuts the
	 * socket down and closes it, under the old server too (and, given it again, aborted
	 * the process: "Close socket failed").
	 */
	trial = s->cur.daemon ? daemon_start(s, NULL, -1, &next) : NULL;
	if (s->cur.daemon && !trial) {
		/* Said once per pair: the check comes back every few seconds. */
		told = same_file(&next.cert_st, &s->refused_cert) && same_file(&next.key_st, &s->refused_key);
		s->refused_cert = next.cert_st;
		s->refused_key = next.key_st;
		instance_stop(&next);
		if (told)
			return 0;
		return cni_err_set(err, CNI_ERR_IO, -EIO,
				   "cannot serve the certificate %s with the key %s (TLS refuses the pair, "
				   "or no descriptor, thread or memory was left for its server): the old "
				   "one serves, tried again at the next check", s->cert_file, s->key_file);
	}
	if (trial)
		MHD_stop_daemon(trial);
	/* Then the socket passes over: the old server stops taking connections, the new one takes them. */
	fd = s->cur.daemon ? MHD_quiesce_daemon(s->cur.daemon) : -1;
	next.daemon = fd >= 0 ? daemon_start(s, NULL, fd, &next) : NULL;
	old = s->cur;
	if (!next.daemon) {
		/*
		 * What the trial had was taken meanwhile (or nothing listened): the socket is
		 * gone with the failed start. Listened on again, with the new pair or else the
		 * old one.
		 */
		if (old.daemon)
			MHD_stop_daemon(old.daemon);
		old.daemon = NULL;
		next.daemon = daemon_start(s, &s->sa, -1, &next);
		if (!next.daemon && old.cert_pem)
			old.daemon = daemon_start(s, &s->sa, -1, &old);
		s->cur = next.daemon ? next : old;
		instance_stop(next.daemon ? &old : &next);
		if (!s->cur.daemon)
			return cni_err_set(err, CNI_ERR_IO, -EIO, "cannot listen again on the webhook's "
					   "address: not serving, tried again at the next check");
		return next.daemon ? 1 : cni_err_set(err, CNI_ERR_IO, -EIO, "cannot serve the new "
						     "certificate: the old one serves again, tried "
						     "again at the next check");
	}
	s->cur = next;
	nanosleep(&(struct timespec){ .tv_nsec = RELOAD_GRACE_MS * 1000000L }, NULL);
	instance_stop(&old);
	return 1;
}

void serve_connections(struct serve *s, struct slots_stats *ret)
{
	slots_stats(s ? s->slots : NULL, ret);
}

int serve_port(const struct serve *s)
{
	return s->port;
}

const char *serve_address(const char *addr, const struct serve *s, char *buf, size_t len)
{
	const char *colon = strrchr(addr, ':');

	if (!s || !colon)
		return addr;
	snprintf(buf, len, "%.*s:%d", (int)(colon - addr), addr, s->port);
	return buf;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	/* The daemon's close notifications have removed its connections from the deadlines. */
	instance_stop(&s->cur);
	deadline_free(s->deadline);
	slots_free(s->slots);
	free(s->cert_file);
	free(s->key_file);
	free(s);
}
