/* Unit tests: host-local's config, ranges, addresses as Go prints them, resolv.conf
 *
 * The messages are upstream's (containernetworking/plugins v1.9.1, allocator/config.go,
 * range.go, range_set.go, dns.go): the cases are re-derived from what that code does,
 * and tests/netns/host-local.sh checks the same messages against the reference binary.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/result.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "ipam/host-local/config.h"
#include "ipam/host-local/dns.h"
#include "ipam/host-local/gotext.h"
#include "ipam/host-local/ip.h"
#include "ipam/host-local/range.h"

static struct cni_conf conf;
static struct cni_args args;
static struct hl_config cfg;

static void release(void)
{
	hl_config_free(&cfg);
	cni_args_free(&args);
	cni_conf_free(&conf);
}

static int teardown(void **state)
{
	(void)state;
	release();
	return 0;
}

/* Load "{cniVersion, name, ipam: {<ipam>} <top>}" with CNI_ARGS @env. */
static int load(const char *version, const char *ipam, const char *top, const char *env,
		struct cni_err *err)
{
	char json[4096];
	int r;

	release();
	*err = (struct cni_err){ 0 };
	snprintf(json, sizeof(json),
		 "{\"cniVersion\":\"%s\",\"name\":\"net1\",\"ipam\":{\"type\":\"host-local\"%s%s}%s}",
		 version, *ipam ? "," : "", ipam, top);
	r = cni_conf_parse(json, strlen(json), &conf, err);
	assert_int_equal(r, 0);
	r = cni_args_parse(env, &args, err);
	assert_int_equal(r, 0);
	return hl_config_load(&conf, &args, &cfg, err);
}

static void assert_refused(const char *ipam, const char *top, const char *env, int code,
			   const char *msg)
{
	struct cni_err err;
	int r = load("1.0.0", ipam, top, env, &err);

	if (r >= 0)
		fail_msg("accepted: %s %s %s", ipam, top, env);
	assert_int_equal(err.code, code);
	if (strcmp(err.msg, msg) != 0)
		fail_msg("message \"%s\", want \"%s\"", err.msg, msg);
}

static const char *fmt(const struct ip_addr *a)
{
	static char bufs[4][HL_IP_STRLEN];
	static unsigned int next;

	return hl_ip_format(a, bufs[next++ % 4]);
}

static const char *range_text(const struct hl_range *r)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s-%s gw %s /%u", fmt(&r->start), fmt(&r->end), fmt(&r->gateway),
		 r->prefix_len);
	return buf;
}

/* Go's net.IP.String(): RFC 5952, never a dotted tail, an IPv4-mapped address as IPv4. */
static void test_ip_format(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "10.1.2.3", "10.1.2.3" },
		{ "::ffff:10.1.2.3", "10.1.2.3" },
		{ "::10.1.2.3", "::a01:203" },
		{ "fd00::", "fd00::" },
		{ "::", "::" },
		{ "::1", "::1" },
		{ "1:0:0:1:0:0:0:1", "1:0:0:1::1" },
		{ "1:0:0:2:0:0:3:4", "1::2:0:0:3:4" },
		{ "1:0:2:3:4:5:6:7", "1:0:2:3:4:5:6:7" },
		{ "FD80:0000:0000:0000:0000:0000:0000:00A0", "fd80::a0" },
		{ "2001:db8:0:0:1:0:0:0", "2001:db8:0:0:1::" },
		{ "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1" },
	};
	struct ip_addr a;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(hl_ip_parse(cases[i].in, &a), 0);
		assert_string_equal(fmt(&a), cases[i].out);
	}
	assert_int_equal(hl_ip_parse("010.1.2.3", &a), -EINVAL);
	assert_int_equal(hl_ip_parse("fe80::1%eth0", &a), -EINVAL);
	assert_int_equal(hl_ip_parse("10.1.2.3/24", &a), -EINVAL);
	assert_int_equal(hl_ip_parse("", &a), -EINVAL);
}

/* Go's net.ParseCIDR(): the prefix in decimal digits, leading zeros allowed, nothing else. */
static void test_cidr_parse(void **state)
{
	struct hl_cidr c;

	(void)state;
	assert_int_equal(hl_cidr_parse("10.1.2.3/0024", &c), 0);
	assert_string_equal(fmt(&c.ip), "10.1.2.3");
	assert_int_equal(c.ones, 24);
	assert_int_equal(c.bits, 32);
	assert_int_equal(hl_cidr_parse("::ffff:10.0.0.0/104", &c), 0);
	assert_int_equal(c.ip.family, AF_INET);
	assert_int_equal(c.bits, 128);
	assert_int_equal(hl_cidr_parse("fd00::/128", &c), 0);
	assert_int_equal(hl_cidr_parse("fd00::/129", &c), -EINVAL);
	assert_int_equal(hl_cidr_parse("10.0.0.0/33", &c), -EINVAL);
	assert_int_equal(hl_cidr_parse("10.0.0.0/", &c), -EINVAL);
	assert_int_equal(hl_cidr_parse("10.0.0.0/+8", &c), -EINVAL);
	assert_int_equal(hl_cidr_parse("10.0.0.0/8 ", &c), -EINVAL);
	assert_int_equal(hl_cidr_parse("10.0.0.0/99999999999999999999999", &c), -EINVAL);
	assert_int_equal(hl_cidr_parse("10.0.0.0", &c), -EINVAL);
}

/* Defaults: gateway .1, start .1 (the gateway is skipped when handing out), end before broadcast. */
static void test_range_defaults(void **state)
{
	struct cni_err err;

	(void)state;
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\"", "", "", &err), 0);
	assert_int_equal(cfg.n_sets, 1);
	assert_int_equal(cfg.sets[0].n, 1);
	assert_string_equal(range_text(&cfg.sets[0].ranges[0]), "10.1.2.1-10.1.2.254 gw 10.1.2.1 /24");
	assert_string_equal(cfg.data_dir, HL_DEFAULT_DATA_DIR);
	assert_null(cfg.resolv_conf);
	assert_int_equal(load("1.0.0", "\"subnet\":\"fd00:1::/120\"", "", "", &err), 0);
	assert_string_equal(range_text(&cfg.sets[0].ranges[0]), "fd00:1::1-fd00:1::ff gw fd00:1::1 /120");
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/30\"", "", "", &err), 0);
	assert_string_equal(range_text(&cfg.sets[0].ranges[0]), "10.1.2.1-10.1.2.2 gw 10.1.2.1 /30");
	assert_int_equal(load("1.0.0",
			      "\"subnet\":\"10.1.0.0/16\",\"rangeStart\":\"10.1.3.0\",\"rangeEnd\":\"10.1.3.255\","
			      "\"gateway\":\"10.1.3.128\",\"dataDir\":\"/run/x\",\"resolvConf\":\"/etc/r\"",
			      "", "", &err), 0);
	assert_string_equal(range_text(&cfg.sets[0].ranges[0]), "10.1.3.0-10.1.3.255 gw 10.1.3.128 /16");
	assert_string_equal(cfg.data_dir, "/run/x");
	assert_string_equal(cfg.resolv_conf, "/etc/r");
	/* "" is none, as for Go's net.IP and strings. */
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"gateway\":\"\",\"dataDir\":\"\"", "", "",
			      &err), 0);
	assert_string_equal(range_text(&cfg.sets[0].ranges[0]), "10.1.2.1-10.1.2.254 gw 10.1.2.1 /24");
	assert_string_equal(cfg.data_dir, HL_DEFAULT_DATA_DIR);
	/* A gateway of another family passes, as upstream's. */
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"gateway\":\"fd00::1\"", "", "", &err), 0);
	assert_string_equal(fmt(&cfg.sets[0].ranges[0].gateway), "fd00::1");
	/* An IPv4-mapped rangeStart is IPv4. */
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"rangeStart\":\"::ffff:10.1.2.9\"", "", "",
			      &err), 0);
	assert_string_equal(fmt(&cfg.sets[0].ranges[0].start), "10.1.2.9");
}

/* The sets in upstream's order: runtimeConfig.ipRanges, the single range, ipam.ranges. */
static void test_range_order(void **state)
{
	struct cni_err err;

	(void)state;
	assert_int_equal(load("1.0.0",
			      "\"subnet\":\"10.2.0.0/24\",\"ranges\":[[{\"subnet\":\"10.3.0.0/24\"},"
			      "{\"subnet\":\"10.4.0.0/24\"}],[{\"subnet\":\"fd00::/64\"}]]",
			      ",\"runtimeConfig\":{\"ipRanges\":[[{\"subnet\":\"10.1.0.0/24\"}]]}", "", &err), 0);
	assert_int_equal(cfg.n_sets, 4);
	assert_string_equal(fmt(&cfg.sets[0].ranges[0].net), "10.1.0.0");
	assert_string_equal(fmt(&cfg.sets[1].ranges[0].net), "10.2.0.0");
	assert_int_equal(cfg.sets[2].n, 2);
	assert_string_equal(fmt(&cfg.sets[2].ranges[1].net), "10.4.0.0");
	assert_string_equal(fmt(&cfg.sets[3].ranges[0].net), "fd00::");
	/* A rangeStart without a subnet at the top is no range (upstream ignores it). */
	assert_int_equal(load("1.0.0", "\"rangeStart\":\"10.9.9.9\",\"ranges\":[[{\"subnet\":\"10.3.0.0/24\"}]]",
			      "", "", &err), 0);
	assert_int_equal(cfg.n_sets, 1);
}

static void test_range_refused(void **state)
{
	(void)state;
	assert_refused("", "", "", CNI_ERR_INVALID_CONFIG, "no IP ranges specified");
	assert_refused("\"ranges\":[]", "", "", CNI_ERR_INVALID_CONFIG, "no IP ranges specified");
	assert_refused("\"subnet\":\"10.1.2.0/31\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: Network 10.1.2.0/31 too small to allocate from");
	assert_refused("\"subnet\":\"10.1.2.1/32\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: Network 10.1.2.1/32 too small to allocate from");
	assert_refused("\"subnet\":\"fd00::/127\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: Network fd00::/127 too small to allocate from");
	assert_refused("\"subnet\":\"::ffff:10.1.2.0/127\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: Network 10.1.2.0/31 too small to allocate from");
	assert_refused("\"subnet\":\"::ffff:10.1.2.0/120\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: IPNet IP and Mask version mismatch");
	assert_refused("\"subnet\":\"10.1.2.3/24\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: Network has host bits set. For a subnet mask of length 24 "
		       "the network address is 10.1.2.0");
	assert_refused("\"subnet\":\"10.1.2.0/24\",\"rangeStart\":\"10.1.3.1\"", "", "",
		       CNI_ERR_INVALID_CONFIG, "invalid range set 0: RangeStart 10.1.3.1 not in network 10.1.2.0/24");
	assert_refused("\"subnet\":\"10.1.2.0/24\",\"rangeStart\":\"fd00::1\"", "", "",
		       CNI_ERR_INVALID_CONFIG, "invalid range set 0: RangeStart fd00::1 not in network 10.1.2.0/24");
	assert_refused("\"subnet\":\"10.1.2.0/24\",\"rangeEnd\":\"10.1.3.1\"", "", "",
		       CNI_ERR_INVALID_CONFIG, "invalid range set 0: RangeEnd 10.1.3.1 not in network 10.1.2.0/24");
	/* Start after end: upstream names rangeStart, which it checks first against rangeEnd. */
	assert_refused("\"subnet\":\"10.1.2.0/24\",\"rangeStart\":\"10.1.2.50\",\"rangeEnd\":\"10.1.2.40\"", "",
		       "", CNI_ERR_INVALID_CONFIG, "invalid range set 0: RangeStart 10.1.2.50 not in network 10.1.2.0/24");
	/* A rangeStart on the broadcast address, after the default rangeEnd: upstream takes it
	 * and then hands out addresses outside the subnet. */
	assert_refused("\"subnet\":\"10.1.2.0/30\",\"rangeStart\":\"10.1.2.3\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: RangeStart 10.1.2.3 is after the last address of network "
		       "10.1.2.0/30, 10.1.2.2");
	/* A rangeEnd before the default start. */
	assert_refused("\"subnet\":\"10.1.2.0/24\",\"rangeEnd\":\"10.1.2.0\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: RangeEnd 10.1.2.0 not in network 10.1.2.0/24");
	assert_refused("\"subnet\":\"10.1.2\"", "", "", CNI_ERR_INVALID_CONFIG, "invalid CIDR address: 10.1.2");
	assert_refused("\"subnet\":\"\"", "", "", CNI_ERR_INVALID_CONFIG, "invalid CIDR address: ");
	assert_refused("\"subnet\":\"10.1.2.0/24\",\"gateway\":\"10.1.2\"", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid IP address: 10.1.2");
	assert_refused("\"ranges\":[[]]", "", "", CNI_ERR_INVALID_CONFIG, "invalid range set 0: empty range set");
	assert_refused("\"ranges\":[null]", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: empty range set");
	assert_refused("\"ranges\":[[{}]]", "", "", CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: IP <nil> not v4 nor v6");
	assert_refused("\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"},{\"subnet\":\"fd00::/64\"}]]", "", "",
		       CNI_ERR_INVALID_CONFIG, "invalid range set 0: mixed address families");
	assert_refused("\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"},{\"subnet\":\"10.1.2.0/25\"}]]", "", "",
		       CNI_ERR_INVALID_CONFIG,
		       "invalid range set 0: subnets 10.1.2.1-10.1.2.254 and 10.1.2.1-10.1.2.126 overlap");
	assert_refused("\"ranges\":[[{\"subnet\":\"10.1.1.0/24\"}],[{\"subnet\":\"10.1.2.0/24\"},{\"subnet\":\"x\"}]]",
		       "", "", CNI_ERR_INVALID_CONFIG, "invalid CIDR address: x");
	assert_refused("\"ranges\":[[{\"subnet\":\"10.1.1.0/24\"}],[{\"subnet\":\"10.1.2.0/24\"}],"
		       "[{\"subnet\":\"10.1.2.128/25\"}]]", "", "", CNI_ERR_INVALID_CONFIG,
		       "range set 1 overlaps with 2");
	/* Ranges that touch end to end do not overlap. */
	assert_int_equal(load("1.0.0", "\"ranges\":[[{\"subnet\":\"10.1.2.0/25\"},{\"subnet\":\"10.1.2.128/25\"}]]",
			      "", "", &(struct cni_err){ 0 }), 0);
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"ranges\":[[{\"subnet\":\"10.1.3.0/24\"}]]",
			      "", "", &(struct cni_err){ 0 }), 0);
	assert_int_equal(cfg.n_sets, 2);
}

/* 0.1.0 and 0.2.0 results have one ip4 and one ip6. */
static void test_version_families(void **state)
{
	struct cni_err err;

	(void)state;
	assert_int_equal(load("0.2.0", "\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"}],[{\"subnet\":\"fd00::/64\"}]]",
			      "", "", &err), 0);
	assert_int_equal(load("0.2.0", "\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"}],[{\"subnet\":\"10.1.3.0/24\"}]]",
			      "", "", &err), -EINVAL);
	assert_string_equal(err.msg, "CNI version 0.2.0 does not support more than 1 address per family");
	assert_int_equal(load("0.3.0", "\"ranges\":[[{\"subnet\":\"10.1.2.0/24\"}],[{\"subnet\":\"10.1.3.0/24\"}]]",
			      "", "", &err), 0);
}

/* IP=, args.cni.ips, runtimeConfig.ips: in that order, a prefix dropped, repeats once. */
static void test_requested(void **state)
{
	struct cni_err err;

	(void)state;
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\"",
			      ",\"args\":{\"cni\":{\"ips\":[\"10.1.2.7/24\",\"fd00::7\"]}},"
			      "\"runtimeConfig\":{\"ips\":[\"10.1.2.8\",\"10.1.2.7\",\"::ffff:10.1.2.9\"]}",
			      "IgnoreUnknown=1;K8S_POD_NAME=x;IP=10.1.2.6", &err), 0);
	assert_int_equal(cfg.n_requested, 5);
	assert_string_equal(fmt(&cfg.requested[0]), "10.1.2.6");
	assert_string_equal(fmt(&cfg.requested[1]), "10.1.2.7");
	assert_string_equal(fmt(&cfg.requested[2]), "fd00::7");
	assert_string_equal(fmt(&cfg.requested[3]), "10.1.2.8");
	assert_string_equal(fmt(&cfg.requested[4]), "10.1.2.9");
	/* "IP=" is none. */
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\"", "", "IP=", &err), 0);
	assert_int_equal(cfg.n_requested, 0);
	assert_refused("\"subnet\":\"10.1.2.0/24\"", "", "K8S_POD_NAME=x", CNI_ERR_INVALID_ENV,
		       "ARGS: unknown args [\"K8S_POD_NAME=x\"] (set IgnoreUnknown=1 to ignore them)");
	assert_refused("\"subnet\":\"10.1.2.0/24\"", "", "IP=10.1.2.x", CNI_ERR_INVALID_ENV,
		       "ARGS: error parsing value of pair \"IP=10.1.2.x\": invalid IP address 10.1.2.x");
	assert_refused("\"subnet\":\"10.1.2.0/24\"", ",\"runtimeConfig\":{\"ips\":[\"10.1.2\"]}", "",
		       CNI_ERR_INVALID_CONFIG, "invalid IP address 10.1.2");
	assert_refused("\"subnet\":\"10.1.2.0/24\"", ",\"args\":{\"cni\":{\"ips\":[\"\"]}}", "",
		       CNI_ERR_INVALID_CONFIG, "cannot understand ip: IP <nil> not v4 nor v6");
}

/* Wrong JSON types: code 6 naming the key. */
static void test_types(void **state)
{
	struct cni_err err;

	(void)state;
	assert_int_equal(load("1.0.0", "\"subnet\":5", "", "", &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_non_null(strstr(err.msg, "subnet"));
	assert_int_equal(load("1.0.0", "\"ranges\":{}", "", "", &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_int_equal(load("1.0.0", "\"ranges\":[[5]]", "", "", &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_int_equal(load("1.0.0", "\"ranges\":[{}]", "", "", &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"dataDir\":[]", "", "", &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\"", ",\"runtimeConfig\":{\"ips\":[null]}", "",
			      &err), -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"routes\":[{\"dst\":5}]", "", "", &err),
			 -EINVAL);
	assert_int_equal(err.code, CNI_ERR_DECODE);
	/* Keys as Go's decoder matches them, in any case. */
	assert_int_equal(load("1.0.0", "\"SUBNET\":\"10.1.2.0/24\",\"RangeStart\":\"10.1.2.5\"", "", "", &err), 0);
	assert_string_equal(fmt(&cfg.sets[0].ranges[0].start), "10.1.2.5");
}

static void test_routes(void **state)
{
	struct cni_err err;

	(void)state;
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"routes\":[{\"dst\":\"0.0.0.0/0\"},"
			      "{\"dst\":\"10.9.0.0/16\",\"gw\":\"10.1.2.254\",\"mtu\":1400}]", "", "", &err), 0);
	assert_int_equal(cfg.n_routes, 2);
	assert_false(cfg.routes[0].has_gw);
	assert_true(cfg.routes[1].has_gw);
	assert_int_equal(cfg.routes[1].mtu, 1400);
}

static void test_missing_ipam(void **state)
{
	const char *json = "{\"cniVersion\":\"1.0.0\",\"name\":\"net1\"}";
	struct cni_err err = { 0 };

	(void)state;
	release();
	assert_int_equal(cni_conf_parse(json, strlen(json), &conf, &err), 0);
	assert_int_equal(hl_config_load(&conf, &args, &cfg, &err), -EINVAL);
	assert_string_equal(err.msg, "IPAM config missing 'ipam' key");
}

/* The order addresses are tried in, with and without the last one reserved. */
static void test_iter(void **state)
{
	struct hl_iter it;
	const struct hl_range *r;
	struct ip_addr ip, last;
	struct cni_err err;
	char seq[512];
	size_t o;

	(void)state;
	/* Two ranges; the gateway of the second inside it. */
	assert_int_equal(load("1.0.0", "\"ranges\":[[{\"subnet\":\"10.1.2.0/29\"},"
			      "{\"subnet\":\"10.1.3.0/29\",\"gateway\":\"10.1.3.3\"}]]", "", "", &err), 0);
	o = 0;
	hl_iter_init(&it, &cfg.sets[0], NULL);
	while (hl_iter_next(&it, &ip, &r))
		o += (size_t)snprintf(seq + o, sizeof(seq) - o, "%s ", fmt(&ip));
	assert_string_equal(seq, "10.1.2.2 10.1.2.3 10.1.2.4 10.1.2.5 10.1.2.6 "
				 "10.1.3.1 10.1.3.2 10.1.3.4 10.1.3.5 10.1.3.6 ");
	assert_int_equal(hl_range_set_capacity(&cfg.sets[0]), 10);
	/* From the address after the last one reserved, wrapping, the last one at the end. */
	assert_int_equal(hl_ip_parse("10.1.2.6", &last), 0);
	o = 0;
	hl_iter_init(&it, &cfg.sets[0], &last);
	while (hl_iter_next(&it, &ip, &r))
		o += (size_t)snprintf(seq + o, sizeof(seq) - o, "%s ", fmt(&ip));
	assert_string_equal(seq, "10.1.3.1 10.1.3.2 10.1.3.4 10.1.3.5 10.1.3.6 "
				 "10.1.2.2 10.1.2.3 10.1.2.4 10.1.2.5 10.1.2.6 ");
	/* The last one reserved was the gateway's neighbour; then one outside the set. */
	assert_int_equal(hl_ip_parse("10.1.3.2", &last), 0);
	hl_iter_init(&it, &cfg.sets[0], &last);
	assert_true(hl_iter_next(&it, &ip, &r));
	assert_string_equal(fmt(&ip), "10.1.3.4");
	assert_int_equal(hl_ip_parse("10.9.9.9", &last), 0);
	hl_iter_init(&it, &cfg.sets[0], &last);
	assert_true(hl_iter_next(&it, &ip, &r));
	assert_string_equal(fmt(&ip), "10.1.2.2");
	/* A range of one address that is its gateway: nothing to hand out. */
	assert_int_equal(load("1.0.0", "\"subnet\":\"10.1.2.0/24\",\"rangeStart\":\"10.1.2.1\",\"rangeEnd\":\"10.1.2.1\"",
			      "", "", &err), 0);
	hl_iter_init(&it, &cfg.sets[0], NULL);
	assert_false(hl_iter_next(&it, &ip, &r));
	assert_int_equal(hl_range_set_capacity(&cfg.sets[0]), 0);
}

/* Every address of a set exactly once, from any starting point (property over many sets). */
static void test_iter_covers(void **state)
{
	struct cni_err err;
	char ipam[512];

	(void)state;
	srand(42);
	for (int round = 0; round < 200; round++) {
		unsigned int a = (unsigned int)rand() % 20, b = a + (unsigned int)rand() % 20;
		unsigned int gw = (unsigned int)rand() % 40, last = (unsigned int)rand() % 50;
		struct ip_addr ip, l;
		const struct hl_range *r;
		struct hl_iter it;
		char seen[256] = { 0 };
		size_t n = 0;
		char lt[32];

		snprintf(ipam, sizeof(ipam),
			 "\"ranges\":[[{\"subnet\":\"10.5.0.0/26\",\"rangeStart\":\"10.5.0.%u\",\"rangeEnd\":\"10.5.0.%u\","
			 "\"gateway\":\"10.5.0.%u\"},{\"subnet\":\"10.5.1.0/28\"}]]", a + 1, b + 1, gw);
		assert_int_equal(load("1.0.0", ipam, "", "", &err), 0);
		snprintf(lt, sizeof(lt), "10.5.%u.%u", last % 2, last);
		assert_int_equal(hl_ip_parse(lt, &l), 0);
		hl_iter_init(&it, &cfg.sets[0], &l);
		while (hl_iter_next(&it, &ip, &r)) {
			unsigned int k = ip.bytes[2] * 64u + ip.bytes[3];

			assert_true(k < sizeof(seen));
			assert_int_equal(seen[k], 0);
			assert_false(ip_addr_equal(&ip, &r->gateway));
			seen[k] = 1;
			n++;
		}
		assert_int_equal(n, hl_range_set_capacity(&cfg.sets[0]));
	}
}

/* resolv.conf as upstream reads it. */
static void test_dns(void **state)
{
	static const char text[] =
		"# generated\n"
		"  nameserver   10.0.0.53  ignored\r\n"
		"nameserver fd00::53\n"
		"; comment\n"
		"domain one.example\n"
		"domain two.example\n"
		"search a.example b.example\n"
		"search c.example\n"
		"options ndots:2\ttimeout:1\n"
		"nameserver\n"
		"sortlist 10.0.0.0\n"
		"options \xff\xfe\n"
		"nameserver\xc2\xa0" "10.0.0.54\n";
	struct cni_result res = { 0 };
	struct cni_err err = { 0 };
	char line[70 * 1024];

	(void)state;
	assert_int_equal(hl_dns_parse(text, sizeof(text) - 1, &res.dns, &err), 0);
	assert_int_equal(res.dns.n_nameservers, 3);
	assert_string_equal(res.dns.nameservers[0], "10.0.0.53");
	assert_string_equal(res.dns.nameservers[1], "fd00::53");
	/* A no-break space separates fields, as Go's strings.Fields() reads it. */
	assert_string_equal(res.dns.nameservers[2], "10.0.0.54");
	assert_string_equal(res.dns.domain, "two.example");
	assert_int_equal(res.dns.n_search, 3);
	assert_string_equal(res.dns.search[2], "c.example");
	assert_int_equal(res.dns.n_options, 3);
	assert_string_equal(res.dns.options[1], "timeout:1");
	/* Bytes that are no UTF-8 as Go's JSON encoder writes them. */
	assert_string_equal(res.dns.options[2], "\xef\xbf\xbd\xef\xbf\xbd");
	cni_result_free(&res);
	memset(line, 'a', sizeof(line));
	assert_int_equal(hl_dns_parse(line, sizeof(line), &res.dns, &err), -E2BIG);
	assert_string_equal(err.msg, "bufio.Scanner: token too long");
}

/* Go's strings.TrimSpace() and Fields(): Unicode white space, whole characters. */
static void test_gotext(void **state)
{
	char s[] = "\xe3\x80\x80\t id\r\neth0 \xc2\x85\n";
	const char *p = "a\xe2\x80\x83" "b  \xc2\xa0" "c\xc2", *f;
	size_t n;
	char *t;

	(void)state;
	t = hl_trim_space(s, strlen(s), &n);
	assert_string_equal(t, "id\r\neth0");
	assert_int_equal(n, 8);
	f = hl_next_field(&p, &n);
	assert_int_equal(n, 1);
	assert_memory_equal(f, "a", 1);
	f = hl_next_field(&p, &n);
	assert_memory_equal(f, "b", 1);
	f = hl_next_field(&p, &n);
	assert_int_equal(n, 2);
	assert_memory_equal(f, "c\xc2", 2);
	assert_null(hl_next_field(&p, &n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ip_format),
		cmocka_unit_test(test_cidr_parse),
		cmocka_unit_test_teardown(test_range_defaults, teardown),
		cmocka_unit_test_teardown(test_range_order, teardown),
		cmocka_unit_test_teardown(test_range_refused, teardown),
		cmocka_unit_test_teardown(test_version_families, teardown),
		cmocka_unit_test_teardown(test_requested, teardown),
		cmocka_unit_test_teardown(test_types, teardown),
		cmocka_unit_test_teardown(test_routes, teardown),
		cmocka_unit_test_teardown(test_missing_ipam, teardown),
		cmocka_unit_test_teardown(test_iter, teardown),
		cmocka_unit_test_teardown(test_iter_covers, teardown),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_gotext),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
