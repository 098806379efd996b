/* dhcp daemon: the leases of every container, served to the plugin over a unix socket */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/log.h"
#include "common/util/nsfd.h"
#include "ipam/dhcp/config.h"
#include "ipam/dhcp/daemon.h"
#include "ipam/dhcp/lease.h"
#include "ipam/dhcp/wire.h"

struct flags {
	const char *pidfile;
	const char *hostprefix;
	const char *socketpath;
	struct dhcp_timing timing;
};

/* Leases by client ID. */
struct entry {
	struct dhcp_lease *lease;
	struct entry *next;
};

static struct {
	pthread_mutex_t mu;
	struct entry *head;
	struct flags f;
} daemon_state = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void usage(FILE *out)
{
	fprintf(out,
		"Usage of daemon:\n"
		"  -broadcast\n    \tbroadcast DHCP leases\n"
		"  -hostprefix string\n    \toptional prefix to host root\n"
		"  -pidfile string\n    \toptional path to write daemon PID to\n"
		"  -resendmax duration\n    \toptional dhcp client max resend delay between requests "
		"(default 1m2s)\n"
		"  -resendtimeout duration\n    \toptional dhcp client resend timeout, no more retries "
		"after this timeout (default 3m28s)\n"
		"  -socketpath string\n    \toptional dhcp server socketpath\n"
		"  -timeout duration\n    \toptional dhcp client timeout duration for each request "
		"(default 10s)\n");
}

/* A duration as Go's time.ParseDuration reads it ("10s", "1m2s", "1.5h", "250ms"). */
static int parse_duration(const char *s, int64_t *ret_ms)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = { { "ns", 1e-6 }, { "us", 1e-3 }, { "µs", 1e-3 }, { "ms", 1 },
		      { "s", 1e3 },   { "m", 6e4 },   { "h", 3.6e6 } };
	double total = 0;
	bool neg = false;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (strcmp(s, "0") == 0) {
		*ret_ms = 0;
		return 0;
	}
	if (!*s)
		return -EINVAL;
	while (*s) {
		char *end;
		double v;
		size_t best = 0, bi = 0;

		if ((*s < '0' || *s > '9') && *s != '.')
			return -EINVAL;
		v = strtod(s, &end);
		if (end == s)
			return -EINVAL;
		s = end;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t n = strlen(units[i].unit);

			if (strncmp(s, units[i].unit, n) == 0 && n > best) {
				best = n;
				bi = i;
			}
		}
		if (!best)
			return -EINVAL;
		total += v * units[bi].ms;
		s += best;
	}
	if (neg || total > 9.2e15)
		return -EINVAL;
	*ret_ms = (int64_t)total;
	return 0;
}

/* Go's flag messages: "<what>: -<flag>" or "invalid value ... for flag -<flag>". */
static int flag_error(const char *what, const char *val, const char *name)
{
	if (val)
		fprintf(stderr, "invalid %s \"%s\" for flag -%s: parse error\n", what, val, name);
	else
		fprintf(stderr, "%s: -%s\n", what, name);
	usage(stderr);
	return 2;
}

/* Go's flag package: "-f v", "-f=v", "--f", a lone boolean, "--" ends the flags. */
static int parse_flags(int argc, char **argv, struct flags *f)
{
	for (int i = 0; i < argc; i++) {
		char *a = argv[i], *name, *val;
		int64_t *dur = NULL;
		const char **str = NULL;

		if (a[0] != '-' || a[1] == '\0')
			break;
		name = a + 1 + (a[1] == '-');
		if (a[1] == '-' && a[2] == '\0')
			break;
		val = strchr(name, '=');
		if (val)
			*val++ = '\0';
		if (strcmp(name, "h") == 0 || strcmp(name, "help") == 0) {
			usage(stderr);
			return 0;
		}
		if (strcmp(name, "broadcast") == 0) {
			if (!val || strcmp(val, "true") == 0 || strcmp(val, "1") == 0 || strcmp(val, "t") == 0)
				f->timing.broadcast = true;
			else if (strcmp(val, "false") == 0 || strcmp(val, "0") == 0 || strcmp(val, "f") == 0)
				f->timing.broadcast = false;
			else
				return flag_error("boolean value", val, name);
			continue;
		}
		if (strcmp(name, "pidfile") == 0)
			str = &f->pidfile;
		else if (strcmp(name, "hostprefix") == 0)
			str = &f->hostprefix;
		else if (strcmp(name, "socketpath") == 0)
			str = &f->socketpath;
		else if (strcmp(name, "timeout") == 0)
			dur = &f->timing.timeout_ms;
		else if (strcmp(name, "resendmax") == 0)
			dur = &f->timing.resend_max_ms;
		else if (strcmp(name, "resendtimeout") == 0)
			dur = &f->timing.resend_timeout_ms;
		else
			return flag_error("flag provided but not defined", NULL, name);
		if (!val) {
			if (i + 1 >= argc)
				return flag_error("flag needs an argument", NULL, name);
			val = argv[++i];
		}
		if (str)
			*str = val;
		else if (parse_duration(val, dur) < 0)
			return flag_error("value", val, name);
	}
	return -1;
}

static struct dhcp_lease *table_find(const char *client_id)
{
	for (struct entry *e = daemon_state.head; e; e = e->next)
		if (strcmp(dhcp_lease_client_id(e->lease), client_id) == 0)
			return e->lease;
	return NULL;
}

static int table_add(struct dhcp_lease *l)
{
	struct entry *e = malloc(sizeof(*e));

	if (!e)
		return -ENOMEM;
	e->lease = dhcp_lease_ref(l);
	e->next = daemon_state.head;
	daemon_state.head = e;
	return 0;
}

/* Takes @l out of the table. Return: the table's reference, or NULL when it was not there. */
static struct dhcp_lease *table_take(struct dhcp_lease *l)
{
	for (struct entry **p = &daemon_state.head; *p; p = &(*p)->next)
		if ((*p)->lease == l) {
			struct entry *e = *p;

			*p = e->next;
			free(e);
			return l;
		}
	return NULL;
}

static int open_netns(const struct dhcp_req *req, int *ret_fd, struct cni_err *err)
{
	char path[PATH_MAX + 256];
	int r;

	if ((size_t)snprintf(path, sizeof(path), "%s%s", daemon_state.f.hostprefix, req->netns) >=
	    sizeof(path))
		return cni_err_set(err, CNI_ERR_INVALID_NETNS, -ENAMETOOLONG, "netns path too long");
	r = nsfd_open(path, ret_fd);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_NETNS, r, "failed to open netns %.256s: %s",
				   path, strerror(-r));
	return 0;
}

/* A lease out of the table: released by its thread when bound, the reference dropped. */
static void lease_end(struct dhcp_lease *l)
{
	if (!l)
		return;
	dhcp_lease_stop(l);
	dhcp_lease_unref(l);
}

/* ADD and CHECK: the lease the table holds for the client ID, else a new one acquired. */
static int do_allocate(const struct dhcp_req *req, struct cni_result *res, struct cni_err *err)
{
	struct dhcp_lease *l, *stale = NULL, *undo = NULL;
	int fd = -1, r = 0;

	pthread_mutex_lock(&daemon_state.mu);
	l = table_find(req->client_id);
	/* One whose acquiring failed or whose thread ended stands for nothing: a new one. */
	if (l && !dhcp_lease_usable(l)) {
		stale = table_take(l);
		l = NULL;
	}
	if (l) {
		dhcp_lease_ref(l);
		dhcp_lease_poke(l);
	} else if ((r = open_netns(req, &fd, err)) >= 0 &&
		   (r = dhcp_lease_start(req, fd, &daemon_state.f.timing, &l)) >= 0 &&
		   (r = table_add(l)) < 0) {
		undo = l;
		l = NULL;
	}
	pthread_mutex_unlock(&daemon_state.mu);
	lease_end(undo);
	lease_end(stale);
	if (r < 0)
		return err->code ? r : cni_err_set(err, CNI_ERR_INTERNAL, r, "%s", strerror(-r));

	r = dhcp_lease_wait(l, err);
	if (r < 0) {
		pthread_mutex_lock(&daemon_state.mu);
		stale = table_take(l);
		pthread_mutex_unlock(&daemon_state.mu);
		lease_end(stale);
	} else {
		r = dhcp_lease_result(l, req->priority, res, err);
	}
	dhcp_lease_unref(l);
	return r;
}

/* DEL: the lease released and forgotten; none held is no error. */
static void do_release(const struct dhcp_req *req)
{
	struct dhcp_lease *l;

	pthread_mutex_lock(&daemon_state.mu);
	l = table_find(req->client_id);
	if (l)
		table_take(l);
	pthread_mutex_unlock(&daemon_state.mu);
	lease_end(l);
}

static void *serve_conn(void *arg)
{
	_cleanup_close_ int fd = (int)(intptr_t)arg;
	_cleanup_free_ char *text = NULL, *answer = NULL;
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	struct dhcp_req *req = malloc(sizeof(*req));
	bool has_result = false;
	size_t len = 0;
	int r;

	if (!req)
		return NULL;
	r = dhcp_wire_recv(fd, &text, &len);
	if (r < 0)
		cni_err_set(&err, CNI_ERR_IO, r, "request: %s", strerror(-r));
	else
		r = dhcp_wire_req_decode(text, len, req, &err);
	if (r >= 0) {
		switch (req->op) {
		case DHCP_OP_ADD:
		case DHCP_OP_CHECK:
			r = do_allocate(req, &res, &err);
			has_result = r >= 0 && req->op == DHCP_OP_ADD;
			break;
		case DHCP_OP_DEL:
			do_release(req);
			break;
		case DHCP_OP_STATUS:
			break;
		}
	}
	if (dhcp_wire_answer_encode(has_result ? &res : NULL, &err, r, &answer) == 0)
		dhcp_wire_send(fd, answer);
	cni_result_free(&res);
	free(req);
	return NULL;
}

/* systemd's socket activation (one socket, LISTEN_FDS), else our own socket. */
static int listen_socket(const char *path, int *ret_fd)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;
	int r;

	if (pid && fds && atoi(pid) == getpid()) {
		if (atoi(fds) != 1) {
			log_error("Error getting listener: %s socket(s) passed through socket activation, "
				  "one wanted", fds);
			return -EINVAL;
		}
		*ret_fd = 3;
		return 0;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_error("Error getting listener: socket path %s too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	if ((r = file_make_parents(path, 0700)) < 0) {
		log_error("Error getting listener: %s: %s", path, strerror(-r));
		return r;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		/* A socket no daemon answers on is a dead daemon's: ours now. */
		_cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct stat st;

		if (errno != EADDRINUSE) {
			log_error("Error getting listener: listen unix %s: bind: %s", path, strerror(errno));
			return -errno;
		}
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			log_error("Error getting listener: a daemon already listens on %s", path);
			return -EADDRINUSE;
		}
		if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || unlink(path) < 0 ||
		    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			log_error("Error getting listener: listen unix %s: bind: address already in use", path);
			return -EADDRINUSE;
		}
	}
	/* Only root may ask for leases: the plugin runs as root. */
	if (chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
		log_error("Error getting listener: %s: %s", path, strerror(errno));
		return -errno;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static int write_pidfile(const char *path)
{
	char buf[32];
	const char *step = "";
	int n = snprintf(buf, sizeof(buf), "%d", getpid()), r;

	if (path[0] != '/') {
		log_error("Error writing pidfile \"%s\": path not absolute", path);
		return -EINVAL;
	}
	if ((r = file_write_atomic(path, buf, (size_t)n, 0644, &step)) < 0) {
		log_error("Error writing pidfile \"%s\": %s: %s", path, step, strerror(-r));
		return -EIO;
	}
	return 0;
}

int dhcp_daemon_main(int argc, char **argv)
{
	struct flags *f = &daemon_state.f;
	char sock_path[PATH_MAX + 256];
	_cleanup_close_ int lfd = -1, sfd = -1;
	sigset_t mask;
	int r;

	*f = (struct flags){
		.pidfile = "",
		.hostprefix = "",
		.socketpath = "",
		.timing = { .timeout_ms = 10000, .resend_max_ms = 62000, .resend_timeout_ms = 208000 },
	};
	r = parse_flags(argc, argv, f);
	if (r >= 0)
		return r;
	log_setup("dhcp", LOG_LEVEL_INFO, LOG_LEVEL_INFO, -1);
	if (!*f->socketpath)
		f->socketpath = DHCP_SOCKET_DEFAULT;
	snprintf(sock_path, sizeof(sock_path), "%s%s", f->hostprefix, f->socketpath);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return 1;
	if (*f->pidfile && write_pidfile(f->pidfile) < 0)
		return 1;
	if (listen_socket(sock_path, &lfd) < 0)
		return 1;
	log_info("listening on %s", sock_path);
	for (;;) {
		struct pollfd p[2] = { { .fd = lfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		pthread_attr_t attr;
		pthread_t t;
		int c;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return 1;
		if (p[1].revents & POLLIN)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, serve_conn, (void *)(intptr_t)c) != 0)
			close(c);
		pthread_attr_destroy(&attr);
	}
	/* As upstream: the leases are left to expire, the socket and the pid file removed. */
	unlink(sock_path);
	if (*f->pidfile)
		unlink(f->pidfile);
	return 0;
}
