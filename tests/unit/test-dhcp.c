/* Unit tests: dhcp's config and request, the client's messages, a server's hostile replies */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/ctx.h"
#include "common/util/error.h"
#include "ipam/dhcp/config.h"
#include "ipam/dhcp/packet.h"
#include "ipam/dhcp/wire.h"

static struct cni_ctx ctx;
static struct dhcp_req req;

static int teardown(void **state)
{
	(void)state;
	cni_conf_free(&ctx.conf);
	cni_args_free(&ctx.args);
	return 0;
}

static int load(const char *ipam, const char *cni_args, const char *container_id,
		struct cni_err *err, const char **sock)
{
	char json[4096];
	const char *path = NULL;
	int r;

	teardown(NULL);
	snprintf(json, sizeof(json), "{\"cniVersion\":\"1.1.0\",\"name\":\"net\",\"type\":\"x\",\"ipam\":%s}",
		 ipam);
	ctx.env.container_id = container_id;
	ctx.env.ifname = "net1";
	ctx.env.netns = "/var/run/netns/p";
	if ((r = cni_conf_parse(json, strlen(json), &ctx.conf, err)) < 0 ||
	    (r = cni_args_parse(cni_args, &ctx.args, err)) < 0)
		return r;
	r = dhcp_config_load(&ctx, DHCP_OP_ADD, &req, &path, err);
	if (sock)
		*sock = path;
	return r;
}

static void config_defaults(void **state)
{
	struct cni_err err = { 0 };
	const char *sock = NULL;

	(void)state;
	assert_int_equal(load("{\"type\":\"dhcp\"}", "", "c1", &err, &sock), 0);
	assert_string_equal(sock, "/run/cni/dhcp.sock");
	assert_string_equal(req.client_id, "c1/net/net1");
	assert_string_equal(req.netns, "/var/run/netns/p");
	assert_int_equal(req.n_opts, 0);
	/* routers, then subnet-mask: upstream's defaults. */
	assert_int_equal(req.n_params, 2);
	assert_int_equal(req.params[0], 3);
	assert_int_equal(req.params[1], 1);
}

static void config_client_id_cut(void **state)
{
	char id[300];
	struct cni_err err = { 0 };

	(void)state;
	memset(id, 'a', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	assert_int_equal(load("{\"type\":\"dhcp\"}", "", id, &err, NULL), 0);
	assert_int_equal(strlen(req.client_id), 254);
}

static void config_provide_request(void **state)
{
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(load("{\"type\":\"dhcp\",\"priority\":9,"
			      "\"provide\":[{\"option\":\"host-name\",\"value\":\"v\",\"fromArg\":\"POD\"},"
			      "{\"option\":\"60\",\"value\":\"vc\"},{\"option\":\"12\",\"value\":\"later\"}],"
			      "\"request\":[{\"option\":\"121\"},{\"option\":\"routers\"},{\"skipDefault\":false}]}",
			      "POD=frompod", "c", &err, NULL), 0);
	assert_int_equal(req.priority, 9);
	/* One option per code, the later value winning: fromArg over value, then "later". */
	assert_int_equal(req.n_opts, 2);
	assert_int_equal(req.opts[0].code, 12);
	assert_int_equal(req.opts[0].len, 5);
	assert_memory_equal(req.opts[0].value, "later", 5);
	assert_int_equal(req.opts[1].code, 60);
	/* 121, routers, then subnet-mask (routers already asked). */
	assert_int_equal(req.n_params, 3);
	assert_int_equal(req.params[0], 121);
	assert_int_equal(req.params[1], 3);
	assert_int_equal(req.params[2], 1);

	assert_int_equal(load("{\"type\":\"dhcp\",\"request\":[{\"option\":\"121\",\"skipDefault\":true}]}",
			      "", "c", &err, NULL), 0);
	assert_int_equal(req.n_params, 1);
}

static void config_refused(void **state)
{
	static const struct {
		const char *ipam;
		int code;
		const char *msg;
	} cases[] = {
		{ "{\"type\":\"dhcp\",\"request\":[{\"option\":\"bogus\"}]}", 7, "Can not parse option \"bogus\"" },
		{ "{\"type\":\"dhcp\",\"request\":[{\"option\":\"0\"}]}", 7, "Can not parse option" },
		{ "{\"type\":\"dhcp\",\"request\":[{\"option\":\"255\"}]}", 7, "Can not parse option" },
		{ "{\"type\":\"dhcp\",\"request\":[{\"option\":\"53\"}]}", 7, "Can not parse option" },
		{ "{\"type\":\"dhcp\",\"request\":[{\"option\":\"3x\"}]}", 7, "Can not parse option" },
		{ "{\"type\":\"dhcp\",\"provide\":[{\"value\":\"x\"}]}", 7, "names none" },
		{ "{\"type\":\"dhcp\",\"provide\":\"x\"}", 6, "provide" },
		{ "{\"type\":\"dhcp\",\"request\":[7]}", 6, "expected an object" },
		{ "{\"type\":\"dhcp\",\"priority\":\"1\"}", 6, "priority" },
		{ "{\"type\":\"dhcp\",\"daemonSocketPath\":1}", 6, "daemonSocketPath" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cni_err err = { 0 };

		assert_true(load(cases[i].ipam, "", "c", &err, NULL) < 0);
		assert_int_equal(err.code, cases[i].code);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].ipam, err.msg, cases[i].msg);
	}
}

static void config_value_too_long(void **state)
{
	char ipam[700], big[300];
	struct cni_err err = { 0 };

	(void)state;
	memset(big, 'x', 256);
	big[256] = '\0';
	snprintf(ipam, sizeof(ipam), "{\"type\":\"dhcp\",\"provide\":[{\"option\":\"12\",\"value\":\"%s\"}]}", big);
	assert_true(load(ipam, "", "c", &err, NULL) < 0);
	assert_int_equal(err.code, 7);
	assert_non_null(strstr(err.msg, "value too long for option 12"));
}

/* The client's message: BOOTP fields, option 61 as upstream's, the config's options. */
static void build_request(void **state)
{
	static const uint8_t id[] = { 0, 'c', '/', 'n', '/', 'e' };
	static const uint8_t params[] = { 3, 1 };
	struct dhcp_opt opts[2] = { { .code = 12, .len = 3, .value = "pod" }, { .code = 61, .len = 2, .value = "ab" } };
	struct dhcp_build b = {
		.type = DHCP_REQUEST, .xid = 0x01020304, .chaddr = { 2, 0, 0, 0, 0, 1 },
		.requested_ip = htonl(0x0a4d0032), .server_id = htonl(0x0a4d0001),
		.client_id = id, .client_id_len = sizeof(id), .opts = opts, .n_opts = 1,
		.params = params, .n_params = 2,
	};
	uint8_t buf[DHCP_MSG_MAX];
	size_t len = 0;
	const uint8_t *o;

	(void)state;
	assert_int_equal(dhcp_msg_build(&b, buf, sizeof(buf), &len), 0);
	assert_int_equal(len, 300);
	assert_int_equal(buf[0], 1);
	assert_memory_equal(buf + 4, "\x01\x02\x03\x04", 4);
	assert_memory_equal(buf + 28, b.chaddr, 6);
	assert_memory_equal(buf + 236, "\x63\x82\x53\x63", 4);
	o = buf + 240;
	assert_memory_equal(o, "\x35\x01\x03", 3);
	assert_memory_equal(o + 3, "\x32\x04\x0a\x4d\x00\x32", 6);
	assert_memory_equal(o + 9, "\x36\x04\x0a\x4d\x00\x01", 6);
	assert_memory_equal(o + 15, "\x3d\x06\x00" "c/n/e", 8);
	assert_memory_equal(o + 23, "\x0c\x03" "pod", 5);
	assert_memory_equal(o + 28, "\x37\x02\x03\x01\xff", 5);

	/* A provided client identifier replaces upstream's. */
	b.n_opts = 2;
	assert_int_equal(dhcp_msg_build(&b, buf, sizeof(buf), &len), 0);
	assert_memory_equal(buf + 240 + 15, "\x3d\x02" "ab", 4);
	/* Too small a buffer is refused, never overrun. */
	assert_int_equal(dhcp_msg_build(&b, buf, 250, &len), -ENOSPC);
}

/* A reply: fixed fields, then options appended by add(). */
static uint8_t msg[DHCP_MSG_MAX + 100];
static size_t msg_len;

static void start(uint8_t type)
{
	memset(msg, 0, sizeof(msg));
	msg[0] = 2;
	msg[1] = 1;
	msg[2] = 6;
	memcpy(msg + 4, "\x11\x22\x33\x44", 4);
	memcpy(msg + 16, "\x0a\x4d\x00\x3c", 4); /* yiaddr 10.77.0.60 */
	memcpy(msg + 28, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(msg + 236, "\x63\x82\x53\x63", 4);
	msg_len = 240;
	msg[msg_len++] = 53;
	msg[msg_len++] = 1;
	msg[msg_len++] = type;
}

static void add(uint8_t code, const void *v, size_t n)
{
	msg[msg_len++] = code;
	msg[msg_len++] = (uint8_t)n;
	memcpy(msg + msg_len, v, n);
	msg_len += n;
}

static struct dhcp_reply reply;

static int parse(void)
{
	msg[msg_len++] = 255;
	return dhcp_msg_parse(msg, msg_len, &reply);
}

static void parse_ack(void **state)
{
	(void)state;
	start(DHCP_ACK);
	add(54, "\x0a\x4d\x00\x01", 4);
	add(1, "\xff\xff\xff\x00", 4);
	add(3, "\x00\x00\x00\x00\x0a\x4d\x00\x01", 8); /* 0.0.0.0 is no router */
	add(51, "\x00\x00\x00\x78", 4);
	assert_int_equal(parse(), 0);
	assert_int_equal(reply.type, DHCP_ACK);
	assert_int_equal(reply.xid, 0x11223344);
	assert_true(reply.has_mask);
	assert_int_equal(reply.prefix_len, 24);
	assert_int_equal(reply.router, htonl(0x0a4d0001));
	assert_int_equal(reply.server_id, htonl(0x0a4d0001));
	assert_true(reply.has_lease);
	assert_int_equal(reply.lease_s, 120);
	assert_int_equal(reply.n_classless, 0);
}

static void parse_malformed(void **state)
{
	(void)state;
	/* An option running past the end. */
	start(DHCP_ACK);
	add(1, "\xff\xff\xff\x00", 4);
	msg[msg_len++] = 3;
	msg[msg_len++] = 200;
	assert_int_equal(dhcp_msg_parse(msg, msg_len, &reply), -EBADMSG);
	/* A length byte missing at the very end. */
	start(DHCP_ACK);
	msg[msg_len++] = 3;
	assert_int_equal(dhcp_msg_parse(msg, msg_len, &reply), -EBADMSG);
	/* No magic cookie; a BOOTREQUEST; no message type; too short. */
	start(DHCP_ACK);
	msg[236] = 0;
	assert_int_equal(parse(), -EBADMSG);
	start(DHCP_ACK);
	msg[0] = 1;
	assert_int_equal(parse(), -EBADMSG);
	start(DHCP_ACK);
	msg_len = 240;
	assert_int_equal(parse(), -EBADMSG);
	assert_int_equal(dhcp_msg_parse(msg, 100, &reply), -EBADMSG);
	/* A mask that is not contiguous, one of the wrong length. */
	start(DHCP_ACK);
	add(1, "\xff\x00\xff\x00", 4);
	assert_int_equal(parse(), 0);
	assert_false(reply.has_mask);
	assert_true(reply.bad_mask);
	start(DHCP_ACK);
	add(1, "\xff\xff", 2);
	assert_int_equal(parse(), 0);
	assert_true(reply.bad_mask);
}

static void parse_classless(void **state)
{
	(void)state;
	/* Split over two instances (RFC 3396), host bits cleared, an on-link route. */
	start(DHCP_ACK);
	add(121, "\x18\x0a\x01", 3);
	add(121, "\x02\x0a\x4d\x00\x01" "\x20\x01\x02\x03\x04\x00\x00\x00\x00" "\x00\x0a\x4d\x00\x01", 19);
	add(33, "\x0a\x00\x00\x00\x0a\x4d\x00\x01", 8);
	assert_int_equal(parse(), 0);
	assert_false(reply.bad_classless);
	assert_int_equal(reply.n_classless, 3);
	assert_int_equal(reply.classless[0].dst, htonl(0x0a010200));
	assert_int_equal(reply.classless[0].len, 24);
	assert_int_equal(reply.classless[0].gw, htonl(0x0a4d0001));
	assert_int_equal(reply.classless[1].len, 32);
	assert_int_equal(reply.classless[1].gw, 0);
	assert_int_equal(reply.classless[2].len, 0);
	assert_int_equal(reply.classless[2].dst, 0);

	/* A width over 32, a truncated entry: ignored whole. */
	start(DHCP_ACK);
	add(121, "\x18\x0a\x01\x02\x0a\x4d\x00\x01" "\x21\x01\x02\x03\x04\x05", 14);
	assert_int_equal(parse(), 0);
	assert_true(reply.bad_classless);
	assert_int_equal(reply.n_classless, 0);
	start(DHCP_ACK);
	add(121, "\x18\x0a\x01\x02\x0a\x4d", 6);
	assert_int_equal(parse(), 0);
	assert_true(reply.bad_classless);
}

static void parse_huge_route_list(void **state)
{
	uint8_t v[255];

	(void)state;
	/* 51 default routes per instance (5 bytes each), 6 instances: 306 routes, over the bound. */
	for (size_t i = 0; i < 51; i++)
		memcpy(v + i * 5, "\x00\x0a\x4d\x00\x01", 5);
	start(DHCP_ACK);
	for (int k = 0; k < 6; k++)
		add(121, v, 255);
	assert_int_equal(parse(), 0);
	assert_true(reply.bad_classless);
	assert_int_equal(reply.n_classless, 0);
	/* 5 instances: 255 routes, within it. */
	start(DHCP_ACK);
	for (int k = 0; k < 5; k++)
		add(121, v, 255);
	assert_int_equal(parse(), 0);
	assert_false(reply.bad_classless);
	assert_int_equal(reply.n_classless, 255);
}

static void parse_statics(void **state)
{
	(void)state;
	start(DHCP_ACK);
	/* Class A, B, C, then D (no classful mask: skipped), then half a pair. */
	add(33, "\x0a\x01\x02\x03\x0a\x4d\x00\x01" "\x80\x01\x02\x03\x0a\x4d\x00\x01"
		"\xc0\xa8\x01\x05\x0a\x4d\x00\x01" "\xe0\x00\x00\x01\x0a\x4d\x00\x01" "\x01\x02\x03\x04", 36);
	assert_int_equal(parse(), 0);
	assert_int_equal(reply.n_static, 3);
	assert_int_equal(reply.statics[0].len, 8);
	assert_int_equal(reply.statics[0].dst, htonl(0x0a000000));
	assert_int_equal(reply.statics[1].len, 16);
	assert_int_equal(reply.statics[2].len, 24);
	assert_int_equal(reply.statics[2].dst, htonl(0xc0a80100));
}

static void lease_times_clamped(void **state)
{
	struct dhcp_reply r = { 0 };
	struct dhcp_times t;

	(void)state;
	/* No lease time: upstream's hour, T1 half, T2 85 %. */
	dhcp_lease_times(&r, &t);
	assert_int_equal(t.lease_s, 3600);
	assert_int_equal(t.t1_s, 1800);
	assert_int_equal(t.t2_s, 3060);
	/* 0 s: no renewal storm. */
	r.has_lease = true;
	r.lease_s = 0;
	dhcp_lease_times(&r, &t);
	assert_int_equal(t.lease_s, DHCP_LEASE_MIN_S);
	assert_int_equal(t.t1_s, DHCP_LEASE_MIN_S / 2);
	assert_int_equal(t.t2_s, DHCP_LEASE_MIN_S * 85 / 100);
	/* "Forever" and 100 years: a year and a day. */
	r.lease_s = 0xffffffffu;
	dhcp_lease_times(&r, &t);
	assert_int_equal(t.lease_s, DHCP_LEASE_MAX_S);
	r.lease_s = 100u * 365u * 24u * 3600u;
	dhcp_lease_times(&r, &t);
	assert_int_equal(t.lease_s, DHCP_LEASE_MAX_S);
	/* T1 past the lease, T2 before T1. */
	r.lease_s = 600;
	r.has_t1 = r.has_t2 = true;
	r.t1_s = 5000;
	r.t2_s = 20;
	dhcp_lease_times(&r, &t);
	assert_int_equal(t.t1_s, 600);
	assert_int_equal(t.t2_s, 600);
	r.t1_s = 0;
	dhcp_lease_times(&r, &t);
	assert_int_equal(t.t1_s, DHCP_RENEW_MIN_S);
	assert_int_equal(t.t2_s, 20);
}

static void wire_round_trip(void **state)
{
	struct dhcp_req in = { .op = DHCP_OP_CHECK, .priority = -3, .n_opts = 1, .n_params = 2,
			       .params = { 121, 1 } };
	struct dhcp_req out;
	struct cni_err err = { 0 };
	char *text = NULL;

	(void)state;
	strcpy(in.client_id, "c/n/net1");
	strcpy(in.netns, "/var/run/netns/p");
	strcpy(in.ifname, "net1");
	in.opts[0] = (struct dhcp_opt){ .code = 12, .len = 3, .value = "a\nb" };
	assert_int_equal(dhcp_wire_req_encode(&in, &text), 0);
	assert_int_equal(dhcp_wire_req_decode(text, strlen(text), &out, &err), 0);
	free(text);
	assert_int_equal(out.op, DHCP_OP_CHECK);
	assert_string_equal(out.client_id, "c/n/net1");
	assert_string_equal(out.netns, "/var/run/netns/p");
	assert_int_equal(out.priority, -3);
	assert_int_equal(out.n_opts, 1);
	assert_memory_equal(out.opts[0].value, "a\nb", 3);
	assert_int_equal(out.n_params, 2);
	assert_int_equal(out.params[0], 121);
	assert_int_equal(dhcp_wire_req_decode("{\"op\":\"add\",\"clientId\":\"c\",\"ifName\":\"net1\","
					      "\"request\":[0]}", 57, &out, &err), -EINVAL);
	assert_int_equal(dhcp_wire_req_decode("{\"op\":\"rm\"}", 11, &out, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(config_defaults, teardown),
		cmocka_unit_test_teardown(config_client_id_cut, teardown),
		cmocka_unit_test_teardown(config_provide_request, teardown),
		cmocka_unit_test_teardown(config_refused, teardown),
		cmocka_unit_test_teardown(config_value_too_long, teardown),
		cmocka_unit_test(build_request),
		cmocka_unit_test(parse_ack),
		cmocka_unit_test(parse_malformed),
		cmocka_unit_test(parse_classless),
		cmocka_unit_test(parse_huge_route_list),
		cmocka_unit_test(parse_statics),
		cmocka_unit_test(lease_times_clamped),
		cmocka_unit_test(wire_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
