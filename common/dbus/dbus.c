/* D-Bus: method calls on the system bus, spoken over its socket (the wire protocol's subset a plugin needs) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/dbus/dbus.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"

#define DEFAULT_ADDRESS "unix:path=/var/run/dbus/system_bus_socket"
#define MAX_ARGS 8

/* Message types, header fields. */
enum { MSG_CALL = 1, MSG_RETURN = 2, MSG_ERROR = 3, MSG_SIGNAL = 4 };
enum { F_PATH = 1, F_INTERFACE = 2, F_MEMBER = 3, F_ERROR_NAME = 4, F_REPLY_SERIAL = 5,
       F_DESTINATION = 6, F_SENDER = 7, F_SIGNATURE = 8, F_UNIX_FDS = 9 };

struct dbus_conn {
	int fd;
	uint32_t serial;
	char address[256]; /* the one connected to, for errors */
};

/* --- marshalling ------------------------------------------------------------- */

struct out {
	uint8_t *buf;
	size_t size, len;
	bool full;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->full || o->len + n > o->size) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

/* Alignment is from the message's start, which is the buffer's. */
static void pad(struct out *o, size_t a)
{
	static const uint8_t zero[8];

	put(o, zero, (a - o->len % a) % a);
}

static void put_u32(struct out *o, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	pad(o, 4);
	put(o, b, 4);
}

static void put_string(struct out *o, const char *s)
{
	put_u32(o, (uint32_t)strlen(s));
	put(o, s, strlen(s) + 1);
}

static void put_sig(struct out *o, const char *s)
{
	uint8_t n = (uint8_t)strlen(s);

	put(o, &n, 1);
	put(o, s, strlen(s) + 1);
}

/* One header field: a struct of its code and a variant of one basic type. */
static void put_field(struct out *o, uint8_t code, const char *type, const char *value)
{
	pad(o, 8);
	put(o, &code, 1);
	put_sig(o, type);
	if (type[0] == 'g')
		put_sig(o, value);
	else
		put_string(o, value);
}

/* The protocol's rules for names and paths, checked loosely: what a plugin passes is ours. */
static bool plain(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n > 0 && n <= max && text_utf8_valid(s, n);
}

int dbus_message_build(uint32_t serial, const char *dest, const char *path, const char *iface,
		       const char *member, const char *const *args, size_t n_args, uint8_t *buf,
		       size_t size, size_t *ret_len)
{
	struct out o = { .buf = buf, .size = size };
	char sig[MAX_ARGS + 1] = "";
	size_t fields_at, body_at;
	uint32_t fields_len, body_len;

	if (serial == 0 || n_args > MAX_ARGS || !plain(dest, 255) || !plain(path, 255) ||
	    path[0] != '/' || !plain(iface, 255) || !plain(member, 255))
		return -EINVAL;
	for (size_t i = 0; i < n_args; i++) {
		if (!text_utf8_valid(args[i], strlen(args[i])))
			return -EINVAL;
		sig[i] = 's';
	}
	put(&o, "l\1\0\1", 4);
	put_u32(&o, 0); /* body length, below */
	put_u32(&o, serial);
	put_u32(&o, 0); /* fields length, below */
	fields_at = o.len;
	put_field(&o, F_PATH, "o", path);
	put_field(&o, F_DESTINATION, "s", dest);
	put_field(&o, F_INTERFACE, "s", iface);
	put_field(&o, F_MEMBER, "s", member);
	if (n_args)
		put_field(&o, F_SIGNATURE, "g", sig);
	fields_len = (uint32_t)(o.len - fields_at);
	pad(&o, 8);
	body_at = o.len;
	for (size_t i = 0; i < n_args; i++)
		put_string(&o, args[i]);
	if (o.full)
		return -E2BIG;
	body_len = (uint32_t)(o.len - body_at);
	for (int k = 0; k < 4; k++) {
		buf[4 + k] = (uint8_t)(body_len >> (8 * k));
		buf[12 + k] = (uint8_t)(fields_len >> (8 * k));
	}
	*ret_len = o.len;
	return 0;
}

/* --- reading ----------------------------------------------------------------- */

struct in {
	const uint8_t *buf;
	size_t len, at;
	bool big;
};

static int get_u32(struct in *i, uint32_t *ret)
{
	const uint8_t *p;

	i->at += (4 - i->at % 4) % 4;
	if (i->at + 4 > i->len)
		return -EBADMSG;
	p = i->buf + i->at;
	*ret = i->big ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] :
			(uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
	i->at += 4;
	return 0;
}

/* A string ("s", "o") or a signature ("g"): its text, NUL-terminated in the message. */
static int get_text(struct in *i, char type, const char **ret, size_t *ret_len)
{
	uint32_t n;

	if (type == 'g') {
		if (i->at >= i->len)
			return -EBADMSG;
		n = i->buf[i->at++];
	} else if (get_u32(i, &n) < 0) {
		return -EBADMSG;
	}
	if (n >= i->len || i->at + n + 1 > i->len || i->buf[i->at + n] != '\0' ||
	    memchr(i->buf + i->at, '\0', n))
		return -EBADMSG;
	*ret = (const char *)i->buf + i->at;
	*ret_len = n;
	i->at += n + 1;
	return 0;
}

static void copy_text(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int dbus_message_length(const uint8_t *head, size_t *ret)
{
	struct in i = { .buf = head, .len = 16, .at = 4, .big = head[0] == 'B' };
	uint32_t body, fields;
	size_t total;

	if ((head[0] != 'l' && head[0] != 'B') || head[3] != 1 || get_u32(&i, &body) < 0)
		return -EBADMSG;
	i.at = 12;
	if (get_u32(&i, &fields) < 0)
		return -EBADMSG;
	if (body > DBUS_MESSAGE_MAX || fields > DBUS_MESSAGE_MAX)
		return -E2BIG;
	total = 16 + (size_t)fields;
	total += (8 - total % 8) % 8;
	total += body;
	if (total > DBUS_MESSAGE_MAX)
		return -E2BIG;
	*ret = total;
	return 0;
}

int dbus_message_parse(const uint8_t *buf, size_t len, int *ret_type, uint32_t *ret_reply_serial,
		       struct dbus_reply *ret)
{
	struct in i = { .buf = buf, .len = len, .big = len > 0 && buf[0] == 'B' };
	struct dbus_reply r = { 0 };
	uint32_t fields, reply_serial = 0, body;
	size_t end, total;
	const char *sig = "";

	if (len < 16 || dbus_message_length(buf, &total) < 0 || total != len)
		return -EBADMSG;
	i.at = 4;
	get_u32(&i, &body);
	i.at = 12;
	get_u32(&i, &fields);
	end = 16 + (size_t)fields;
	while (i.at < end) {
		const char *type, *text;
		size_t tlen, n;
		uint8_t code;

		i.at += (8 - i.at % 8) % 8;
		if (i.at >= end)
			break;
		code = buf[i.at++];
		if (get_text(&i, 'g', &type, &tlen) < 0 || tlen != 1)
			return -EBADMSG;
		if (*type == 's' || *type == 'o' || *type == 'g') {
			if (get_text(&i, *type, &text, &n) < 0)
				return -EBADMSG;
			if (code == F_ERROR_NAME)
				copy_text(r.error_name, sizeof(r.error_name), text, n);
			else if (code == F_SIGNATURE)
				sig = text;
		} else if (*type == 'u' || *type == 'h') {
			uint32_t v;

			if (get_u32(&i, &v) < 0)
				return -EBADMSG;
			if (code == F_REPLY_SERIAL)
				reply_serial = v;
		} else {
			return -EBADMSG;
		}
		if (i.at > end)
			return -EBADMSG;
	}
	copy_text(r.signature, sizeof(r.signature), sig, strlen(sig));
	/* The body: a string (a return's, an error's message) or a boolean, first. */
	i.at = end + (8 - end % 8) % 8;
	if (sig[0] == 's') {
		const char *text;
		size_t n;

		if (get_text(&i, 's', &text, &n) < 0)
			return -EBADMSG;
		copy_text(r.text, sizeof(r.text), text, n);
	} else if (sig[0] == 'b') {
		uint32_t v;

		if (get_u32(&i, &v) < 0 || v > 1)
			return -EBADMSG;
		r.boolean = v;
	}
	r.is_error = buf[1] == MSG_ERROR;
	*ret_type = buf[1];
	*ret_reply_serial = reply_serial;
	*ret = r;
	return 0;
}

/* --- the socket -------------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Exactly @n bytes before @deadline; -ETIMEDOUT, -ECONNRESET at the end of the stream. */
static int read_all(int fd, void *p, size_t n, int64_t deadline)
{
	uint8_t *b = p;

	while (n > 0) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t got;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pf, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!(pf.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		got = read(fd, b, n);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -ECONNRESET;
		b += got;
		n -= (size_t)got;
	}
	return 0;
}

/* %XX escapes of an address value. */
static int unescape(const char *s, size_t n, char *out, size_t size)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (k + 1 >= size)
			return -ENAMETOOLONG;
		if (s[i] == '%') {
			if (i + 2 >= n || sscanf(s + i + 1, "%2x", &v) != 1)
				return -EINVAL;
			out[k++] = (char)v;
			i += 2;
		} else {
			out[k++] = s[i];
		}
	}
	out[k] = '\0';
	return 0;
}

/* One "unix:path=...|abstract=..." entry: a connected socket, or why not. */
static int connect_entry(const char *e, size_t n, int *ret_fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[sizeof(sa.sun_path)] = "";
	bool abstract = false;
	socklen_t len;
	int fd, r;

	if (n < 5 || strncmp(e, "unix:", 5) != 0)
		return -EPROTONOSUPPORT;
	for (size_t at = 5; at < n;) {
		size_t kv = strcspn(e + at, ",;");

		if (kv > n - at)
			kv = n - at;
		if (strncmp(e + at, "path=", 5) == 0 || strncmp(e + at, "abstract=", 9) == 0) {
			size_t key = e[at] == 'p' ? 5 : 9;

			abstract = e[at] == 'a';
			r = unescape(e + at + key, kv - key, path, sizeof(path) - 1);
			if (r < 0)
				return r;
		}
		at += kv + 1;
	}
	if (!*path)
		return -EINVAL;
	memcpy(sa.sun_path + abstract, path, strlen(path));
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + strlen(path) + !abstract);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* SASL EXTERNAL as the process's user, then BEGIN: the bus checks the socket's credentials. */
static int authenticate(int fd, struct cni_err *err, const char *address)
{
	char uid[16], line[64 + 2 * sizeof(uid)], reply[512];
	int64_t deadline = now_ms() + DBUS_CALL_TIMEOUT_MS;
	size_t n = 0, k;
	int r;

	snprintf(uid, sizeof(uid), "%u", (unsigned int)geteuid());
	k = (size_t)snprintf(line, sizeof(line), "AUTH EXTERNAL ");
	for (const char *p = uid; *p; p++)
		k += (size_t)snprintf(line + k, sizeof(line) - k, "%02x", (unsigned char)*p);
	k += (size_t)snprintf(line + k, sizeof(line) - k, "\r\n");
	r = write_all(fd, "", 1);
	if (r >= 0)
		r = write_all(fd, line, k);
	/* The server's line, byte by byte: nothing of the messages after it is read. */
	while (r >= 0 && (n < 2 || reply[n - 2] != '\r' || reply[n - 1] != '\n')) {
		if (n + 1 >= sizeof(reply)) {
			r = -EPROTO;
			break;
		}
		r = read_all(fd, reply + n, 1, deadline);
		n += r >= 0;
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "D-Bus %s: authentication: %s", address,
				   strerror(-r));
	reply[n - 2] = '\0';
	if (strncmp(reply, "OK ", 3) != 0) {
		char shown[128];

		text_escape(reply, strlen(reply), shown, sizeof(shown));
		return cni_err_set(err, CNI_ERR_KERNEL, -EACCES, "D-Bus %s: authentication refused: %s",
				   address, shown);
	}
	r = write_all(fd, "BEGIN\r\n", 7);
	return r < 0 ? cni_err_set(err, CNI_ERR_KERNEL, r, "D-Bus %s: %s", address, strerror(-r)) : 0;
}

int dbus_connect_system(struct dbus_conn **ret, struct cni_err *err)
{
	const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
	struct dbus_reply hello;
	struct dbus_conn *c;
	int fd = -1, r = -EINVAL;

	if (!address || !*address)
		address = DEFAULT_ADDRESS;
	for (const char *e = address; *e && fd < 0;) {
		size_t n = strcspn(e, ";");

		r = connect_entry(e, n, &fd);
		e += n + (e[n] == ';');
	}
	if (fd < 0) {
		char shown[256];

		text_escape(address, strlen(address), shown, sizeof(shown));
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot connect to the D-Bus system bus %s: %s",
				   shown, r == -EPROTONOSUPPORT ? "only unix: addresses are spoken" :
								  strerror(-r));
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	c->fd = fd;
	text_escape(address, strlen(address), c->address, sizeof(c->address));
	r = authenticate(fd, err, c->address);
	if (r >= 0)
		r = dbus_call(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			      "Hello", NULL, 0, &hello, err);
	if (r >= 0 && hello.is_error)
		r = cni_err_set(err, CNI_ERR_KERNEL, -EACCES, "D-Bus %s: Hello refused: %s: %s",
				c->address, hello.error_name, hello.text);
	if (r < 0) {
		dbus_close(c);
		return r;
	}
	*ret = c;
	return 0;
}

void dbus_close(struct dbus_conn *c)
{
	if (!c)
		return;
	close(c->fd);
	free(c);
}

int dbus_call(struct dbus_conn *c, const char *dest, const char *path, const char *iface,
	      const char *member, const char *const *args, size_t n_args, struct dbus_reply *ret,
	      struct cni_err *err)
{
	int64_t deadline = now_ms() + DBUS_CALL_TIMEOUT_MS;
	uint8_t msg[4096];
	uint32_t serial = ++c->serial;
	size_t len;
	int r;

	r = dbus_message_build(serial, dest, path, iface, member, args, n_args, msg, sizeof(msg),
			       &len);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r, "D-Bus: %s.%s: an argument the "
				   "protocol cannot carry", iface, member);
	r = write_all(c->fd, msg, len);
	/* Replies come in order with signals between them: read until ours. */
	while (r >= 0) {
		_cleanup_free_ uint8_t *in = NULL;
		uint8_t head[16];
		uint32_t reply_to;
		size_t total;
		int type;

		r = read_all(c->fd, head, sizeof(head), deadline);
		if (r >= 0)
			r = dbus_message_length(head, &total);
		if (r >= 0 && !(in = malloc(total)))
			r = -ENOMEM;
		if (r < 0)
			break;
		memcpy(in, head, sizeof(head));
		r = read_all(c->fd, in + sizeof(head), total - sizeof(head), deadline);
		if (r >= 0)
			r = dbus_message_parse(in, total, &type, &reply_to, ret);
		if (r >= 0 && (type == MSG_RETURN || type == MSG_ERROR) && reply_to == serial)
			return 0;
	}
	return cni_err_set(err, CNI_ERR_KERNEL, r, "D-Bus %s: %s.%s: %s", c->address, iface, member,
			   r == -ETIMEDOUT ? "no reply within 20 s" : strerror(-r));
}
