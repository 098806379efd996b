/* DHCPv4 messages: the client's built, the server's read with every length checked */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ipam/dhcp/packet.h"

/* RFC 2131: op, htype, hlen, hops, xid, secs, flags, 4 addresses, chaddr, sname, file. */
#define BOOTP_FIXED 236
#define MAGIC_COOKIE 0x63825363u
#define OPTS_OFF (BOOTP_FIXED + 4)

static void put32(uint8_t *p, uint32_t v_net)
{
	memcpy(p, &v_net, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

struct out {
	uint8_t *buf;
	size_t size;
	size_t len;
	bool full;
};

static void out_opt(struct out *o, uint8_t code, const void *val, size_t n)
{
	if (o->full || n > 255 || o->len + 2 + n + 1 > o->size) {
		o->full = true;
		return;
	}
	o->buf[o->len++] = code;
	o->buf[o->len++] = (uint8_t)n;
	memcpy(o->buf + o->len, val, n);
	o->len += n;
}

/* The config's option of this code, if it gives one: it replaces ours (as upstream's Update). */
static const struct dhcp_opt *given(const struct dhcp_build *b, uint8_t code)
{
	const struct dhcp_opt *found = NULL;

	for (size_t i = 0; i < b->n_opts; i++)
		if (b->opts[i].code == code)
			found = &b->opts[i];
	return found;
}

int dhcp_msg_build(const struct dhcp_build *b, uint8_t *buf, size_t size, size_t *ret_len)
{
	struct out o = { .buf = buf, .size = size, .len = OPTS_OFF };
	const struct dhcp_opt *g;

	if (size < OPTS_OFF + 1)
		return -ENOSPC;
	memset(buf, 0, OPTS_OFF);
	buf[0] = 1; /* BOOTREQUEST */
	buf[1] = 1; /* Ethernet */
	buf[2] = 6;
	put32(buf + 4, htonl(b->xid));
	if (b->broadcast)
		buf[10] = 0x80;
	put32(buf + 12, b->ciaddr);
	memcpy(buf + 28, b->chaddr, 6);
	put32(buf + BOOTP_FIXED, htonl(MAGIC_COOKIE));

	out_opt(&o, DHCP_OPT_MSG_TYPE, &b->type, 1);
	if (b->requested_ip)
		out_opt(&o, DHCP_OPT_REQUESTED_IP, &b->requested_ip, 4);
	if (b->server_id)
		out_opt(&o, DHCP_OPT_SERVER_ID, &b->server_id, 4);
	if ((g = given(b, DHCP_OPT_CLIENT_ID)))
		out_opt(&o, g->code, g->value, g->len);
	else
		out_opt(&o, DHCP_OPT_CLIENT_ID, b->client_id, b->client_id_len);
	/* A RELEASE carries only what names the lease. */
	if (b->type != DHCP_RELEASE) {
		for (size_t i = 0; i < b->n_opts; i++) {
			uint8_t c = b->opts[i].code;

			if (c == DHCP_OPT_CLIENT_ID || c == DHCP_OPT_PARAM_LIST || given(b, c) != &b->opts[i])
				continue;
			out_opt(&o, c, b->opts[i].value, b->opts[i].len);
		}
		if (b->n_params)
			out_opt(&o, DHCP_OPT_PARAM_LIST, b->params, b->n_params);
		else if ((g = given(b, DHCP_OPT_PARAM_LIST)))
			out_opt(&o, g->code, g->value, g->len);
	}
	if (o.full)
		return -ENOSPC;
	buf[o.len++] = DHCP_OPT_END;
	/* Some servers drop BOOTP messages shorter than the 300 bytes RFC 1542 asks for. */
	while (o.len < 300 && o.len < size)
		buf[o.len++] = DHCP_OPT_PAD;
	*ret_len = o.len;
	return 0;
}

/*
 * Every instance of option @code concatenated into @out (RFC 3396).
 * Return: its length, -1 when absent, -2 when longer than @size.
 */
static int collect(const uint8_t *opts, size_t n, uint8_t code, uint8_t *out, size_t size)
{
	size_t got = 0;
	bool seen = false;

	for (size_t i = 0; i < n;) {
		uint8_t c = opts[i];

		if (c == DHCP_OPT_PAD) {
			i++;
			continue;
		}
		if (c == DHCP_OPT_END)
			break;
		/* Lengths were checked by walk(). */
		if (c == code) {
			size_t l = opts[i + 1];

			if (got + l > size)
				return -2;
			memcpy(out + got, opts + i + 2, l);
			got += l;
			seen = true;
		}
		i += 2 + (size_t)opts[i + 1];
	}
	return seen ? (int)got : -1;
}

/* Whether every option's length stays inside the area; the area ends at END or at its end. */
static bool walk(const uint8_t *opts, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (opts[i] == DHCP_OPT_PAD) {
			i++;
			continue;
		}
		if (opts[i] == DHCP_OPT_END)
			return true;
		if (i + 1 >= n || i + 2 + (size_t)opts[i + 1] > n)
			return false;
		i += 2 + (size_t)opts[i + 1];
	}
	return true;
}

static bool mask_len(uint32_t mask_net, uint8_t *ret)
{
	uint32_t m = ntohl(mask_net);
	uint8_t len = 0;

	while (len < 32 && (m & (0x80000000u >> len)))
		len++;
	if (len < 32 && (m << len) != 0)
		return false;
	*ret = len;
	return true;
}

static uint32_t prefix_mask(unsigned int len)
{
	return len == 0 ? 0 : htonl(0xffffffffu << (32 - len));
}

/* A router a route or a gateway can use: not 0.0.0.0, loopback, multicast or broadcast. */
static bool usable_router(uint32_t a_net)
{
	uint32_t a = ntohl(a_net);

	return a != 0 && (a >> 24) != 127 && (a >> 28) != 0xe && a != 0xffffffffu;
}

/* RFC 3442: a width, the significant octets of the destination, the router. All or nothing. */
static bool read_classless(const uint8_t *v, size_t n, struct dhcp_reply *r)
{
	size_t count = 0;

	for (size_t i = 0; i < n;) {
		uint8_t width = v[i];
		size_t sig = (width + 7u) / 8u;
		uint32_t dst = 0;

		if (width > 32 || i + 1 + sig + 4 > n || count == DHCP_ROUTES_MAX)
			return false;
		memcpy(&dst, v + i + 1, sig);
		r->classless[count].dst = dst & prefix_mask(width);
		r->classless[count].len = width;
		r->classless[count].gw = get32(v + i + 1 + sig);
		count++;
		i += 1 + sig + 4;
	}
	r->n_classless = count;
	return count > 0;
}

unsigned int dhcp_classful_len(uint32_t dst)
{
	uint8_t first = (uint8_t)(ntohl(dst) >> 24);

	if (first < 0x80)
		return 8;
	if (first < 0xc0)
		return 16;
	if (first < 0xe0)
		return 24;
	return 0;
}

/* Option 33: destination and router pairs; class D and E destinations have no mask: skipped. */
static void read_statics(const uint8_t *v, size_t n, struct dhcp_reply *r)
{
	for (size_t i = 0; i + 8 <= n && r->n_static < DHCP_ROUTES_MAX; i += 8) {
		uint32_t dst = get32(v + i);
		unsigned int len = dhcp_classful_len(dst);

		if (!len)
			continue;
		r->statics[r->n_static].dst = dst & prefix_mask(len);
		r->statics[r->n_static].len = (uint8_t)len;
		r->statics[r->n_static].gw = get32(v + i + 4);
		r->n_static++;
	}
}

static bool read_u32(const uint8_t *opts, size_t n, uint8_t code, uint32_t *ret)
{
	uint8_t v[DHCP_MSG_MAX];

	if (collect(opts, n, code, v, sizeof(v)) != 4)
		return false;
	*ret = get32(v);
	return true;
}

int dhcp_msg_parse(const uint8_t *buf, size_t len, struct dhcp_reply *ret)
{
	static _Thread_local uint8_t v[DHCP_MSG_MAX];
	const uint8_t *opts = buf + OPTS_OFF;
	size_t n;
	uint32_t u;
	int l;

	memset(ret, 0, sizeof(*ret));
	if (len < OPTS_OFF || len > DHCP_MSG_MAX || buf[0] != 2 || buf[1] != 1 || buf[2] != 6 ||
	    ntohl(get32(buf + BOOTP_FIXED)) != MAGIC_COOKIE)
		return -EBADMSG;
	n = len - OPTS_OFF;
	if (!walk(opts, n))
		return -EBADMSG;
	ret->xid = ntohl(get32(buf + 4));
	ret->yiaddr = get32(buf + 16);
	memcpy(ret->chaddr, buf + 28, 6);
	if (collect(opts, n, DHCP_OPT_MSG_TYPE, v, sizeof(v)) != 1)
		return -EBADMSG;
	ret->type = v[0];

	if (read_u32(opts, n, DHCP_OPT_SERVER_ID, &u))
		ret->server_id = u;
	l = collect(opts, n, DHCP_OPT_SUBNET_MASK, v, sizeof(v));
	if (l == 4 && mask_len(get32(v), &ret->prefix_len))
		ret->has_mask = true;
	else if (l != -1)
		ret->bad_mask = true;
	l = collect(opts, n, DHCP_OPT_ROUTER, v, sizeof(v));
	for (int i = 0; i + 4 <= l; i += 4)
		if (usable_router(get32(v + i))) {
			ret->router = get32(v + i);
			break;
		}
	if ((ret->has_lease = read_u32(opts, n, DHCP_OPT_LEASE_TIME, &u)))
		ret->lease_s = ntohl(u);
	if ((ret->has_t1 = read_u32(opts, n, DHCP_OPT_RENEWAL_TIME, &u)))
		ret->t1_s = ntohl(u);
	if ((ret->has_t2 = read_u32(opts, n, DHCP_OPT_REBINDING_TIME, &u)))
		ret->t2_s = ntohl(u);
	l = collect(opts, n, DHCP_OPT_CLASSLESS_ROUTES, v, sizeof(v));
	if (l >= 0 && !read_classless(v, (size_t)l, ret)) {
		ret->bad_classless = true;
		ret->n_classless = 0;
	} else if (l == -2) {
		ret->bad_classless = true;
	}
	l = collect(opts, n, DHCP_OPT_STATIC_ROUTES, v, sizeof(v));
	if (l > 0)
		read_statics(v, (size_t)l, ret);
	return 0;
}

static uint32_t clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void dhcp_lease_times(const struct dhcp_reply *r, struct dhcp_times *ret)
{
	uint32_t lease = clamp(r->has_lease ? r->lease_s : DHCP_LEASE_DEFAULT_S, DHCP_LEASE_MIN_S,
			       DHCP_LEASE_MAX_S);
	uint32_t t2 = r->has_t2 ? r->t2_s : (uint32_t)((uint64_t)lease * 85 / 100);
	uint32_t t1 = r->has_t1 ? r->t1_s : lease / 2;

	ret->lease_s = lease;
	ret->t1_s = clamp(t1, DHCP_RENEW_MIN_S, lease);
	ret->t2_s = clamp(t2, ret->t1_s, lease);
}
