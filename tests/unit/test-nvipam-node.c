/*
 * Unit tests: ipam-node's pure parts: its flags as the DaemonSet passes them, Go durations,
 * klog text and JSON lines (API strings escaped; the store's lines through klog_sink),
 * nv-ipam.conf, pool sizes and the Prometheus text, bind addresses
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "ipam/nv-ipam/daemon/duration.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/daemon/limits.h"
#include "ipam/nv-ipam/gc/run.h"
#include "ipam/nv-ipam/node/conf.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/metrics.h"
#include "ipam/nv-ipam/node/node.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/serve/http.h"

static int parse(const char *const *argv, struct node_flags *ret, char *errbuf, size_t len)
{
	int argc = 0;
	FILE *err = fmemopen(errbuf, len, "w");
	int r;

	while (argv[argc])
		argc++;
	r = node_flags_parse(argc, argv, ret, err);
	fclose(err);
	return r;
}

/* The Network Operator's nv-ipam-node DaemonSet, as rendered (26.4). */
static void test_flags_daemonset(void **state)
{
	const char *argv[] = { "/ipam-node", "--node-name=node-1", "--v=1", "--logging-format=json",
			 "--bind-address=unix:///var/lib/cni/nv-ipam/daemon.sock",
			 "--store-file=/var/lib/cni/nv-ipam/store",
			 "--cni-daemon-socket=unix:///var/lib/cni/nv-ipam/daemon.sock",
			 "--cni-daemon-call-timeout=5", "--cni-bin-dir=/opt/cni/bin",
			 "--cni-conf-dir=/etc/cni/net.d/nv-ipam.d",
			 "--cni-log-file=/var/log/nv-ipam-cni.log", "--cni-log-level=info",
			 "--ippools-namespace=nvidia-network-operator", NULL };
	struct node_flags f;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse(argv, &f, err, sizeof(err)), 1);
	assert_string_equal(f.node_name, "node-1");
	assert_int_equal(f.v, 1);
	assert_string_equal(f.logging_format, "json");
	assert_string_equal(f.store_file, "/var/lib/cni/nv-ipam/store");
	assert_string_equal(f.cni_conf_dir, "/etc/cni/net.d/nv-ipam.d");
	assert_string_equal(f.ippools_namespace, "nvidia-network-operator");
	/* The defaults the DaemonSet leaves as they are. */
	assert_string_equal(f.cni_nv_ipam_bin_file, "/nv-ipam");
	assert_string_equal(f.metrics_bind_address, ":8080");
	assert_string_equal(f.health_probe_bind_address, ":8081");
	assert_int_equal(f.stale_check_interval_ms, 60000);
	assert_int_equal(f.stale_check_count, 3);
	assert_false(f.cni_force_pool_name);
	/* The daemon's socket means nothing without a daemon: taken, and said. */
	assert_int_equal(f.n_ignored, 1);
	assert_string_equal(f.ignored[0], "bind-address");
}

static void test_flags_spellings(void **state)
{
	const char *argv[] = { "ipam-node", "--node-name", "n", "-v", "3", "--cni-force-pool-name",
			 "--cni-skip-nv-ipam-binary-copy=false", "--stale-ip-check-interval", "1m30s",
			 "--feature-gates=A=true", "--log-json-split-stream", NULL };
	struct node_flags f;
	char err[256] = "";

	(void)state;
	assert_int_equal(parse(argv, &f, err, sizeof(err)), 1);
	assert_string_equal(f.node_name, "n");
	assert_int_equal(f.v, 3);
	assert_true(f.cni_force_pool_name);
	assert_false(f.cni_skip_binary_copy);
	assert_int_equal(f.stale_check_interval_ms, 90000);
	assert_int_equal(f.n_ignored, 2);
}

static void flags_fail(const char *const *argv, const char *part)
{
	struct node_flags f;
	char err[256] = "";

	assert_int_equal(parse(argv, &f, err, sizeof(err)), -EINVAL);
	if (!strstr(err, part))
		fail_msg("\"%s\" does not contain \"%s\"", err, part);
}

static void test_flags_errors(void **state)
{
	(void)state;
	flags_fail((const char *[]){ "x", "--nope=1", NULL }, "unknown flag: --nope");
	flags_fail((const char *[]){ "x", "--v=high", NULL }, "invalid argument \"high\" for \"--v\" flag");
	flags_fail((const char *[]){ "x", "--cni-force-pool-name=yes", NULL }, "invalid argument \"yes\"");
	flags_fail((const char *[]){ "x", "--node-name", NULL }, "flag needs an argument: --node-name");
	flags_fail((const char *[]){ "x", "positional", NULL }, "takes no arguments");
	flags_fail((const char *[]){ "x", "-x", NULL }, "unknown shorthand flag");
	flags_fail((const char *[]){ "x", "--stale-ip-check-interval=5", NULL },
		   "invalid argument \"5\" for \"--stale-ip-check-interval\" flag: a duration such as 30s");
	flags_fail((const char *[]){ "x", "--cni-daemon-call-timeout=-1", NULL }, "invalid argument");
}

static void test_durations(void **state)
{
	long ms = -1;

	(void)state;
	assert_int_equal(go_duration_ms("0", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(go_duration_ms("1m", &ms), 0);
	assert_int_equal(ms, 60000);
	assert_int_equal(go_duration_ms("1h2m3.5s", &ms), 0);
	assert_int_equal(ms, 3723500);
	assert_int_equal(go_duration_ms("250ms", &ms), 0);
	assert_int_equal(ms, 250);
	assert_int_equal(go_duration_ms("1.5h", &ms), 0);
	assert_int_equal(ms, 5400000);
	assert_int_equal(go_duration_ms("", &ms), -EINVAL);
	assert_int_equal(go_duration_ms("10", &ms), -EINVAL);
	assert_int_equal(go_duration_ms("-1s", &ms), -EINVAL);
	assert_int_equal(go_duration_ms("1d", &ms), -EINVAL);
	assert_int_equal(go_duration_ms("9000h", &ms), -EINVAL);
}

/* What klog writes to a pipe, as one string. */
static void klog_capture(enum klog_format fmt, int v, void (*emit)(void), char *buf, size_t len)
{
	int fds[2];
	ssize_t n;

	assert_int_equal(pipe(fds), 0);
	klog_setup(fmt, v, fds[1]);
	emit();
	close(fds[1]);
	n = read(fds[0], buf, len - 1);
	close(fds[0]);
	buf[n > 0 ? n : 0] = '\0';
	klog_setup(KLOG_TEXT, 0, -1);
}

static void emit_lines(void)
{
	klog_info(0, "pool \"x\"\nchanged", "pool", "a\x1b[31m\"b", NULL);
	klog_info(2, "too verbose", NULL);
	klog_error("boom\n", "failed", "key", "v", NULL);
}

static void test_klog_json(void **state)
{
	char buf[2048], *line2;
	struct json_object *a, *b;

	(void)state;
	klog_capture(KLOG_JSON, 1, emit_lines, buf, sizeof(buf));
	line2 = strchr(buf, '\n');
	assert_non_null(line2);
	*line2++ = '\0';
	/* Two lines: the -v 2 one is dropped; each a JSON object, strings intact. */
	a = json_tokener_parse(buf);
	b = json_tokener_parse(line2);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(json_object_get_string(json_object_object_get(a, "msg")), "pool \"x\"\nchanged");
	assert_string_equal(json_object_get_string(json_object_object_get(a, "pool")), "a\x1b[31m\"b");
	assert_int_equal(json_object_get_int(json_object_object_get(a, "v")), 0);
	assert_true(json_object_is_type(json_object_object_get(a, "ts"), json_type_double));
	assert_non_null(strstr(json_object_get_string(json_object_object_get(a, "caller")), "test-nvipam-node.c:"));
	assert_string_equal(json_object_get_string(json_object_object_get(b, "err")), "boom\n");
	assert_null(json_object_object_get(b, "v"));
	assert_ptr_equal(strchr(line2, '\n'), line2 + strlen(line2) - 1);
	json_object_put(a);
	json_object_put(b);
}

static void test_klog_text(void **state)
{
	char buf[2048];

	(void)state;
	klog_capture(KLOG_TEXT, 0, emit_lines, buf, sizeof(buf));
	/* One line each: I... and E..., the API's strings unable to forge a line or a key. */
	assert_int_equal(buf[0], 'I');
	assert_non_null(strstr(buf, "test-nvipam-node.c:"));
	assert_non_null(strstr(buf, "] \"pool \\\"x\\\"\\nchanged\" pool=\"a\\x1b[31m\\\"b\"\n"));
	assert_non_null(strstr(buf, "\nE"));
	assert_non_null(strstr(buf, "] \"failed\" err=\"boom\\n\" key=\"v\"\n"));
	assert_null(strstr(buf, "too verbose"));
}

static void emit_util_lines(void)
{
	log_warning("store %s: \"late\"\nwrite", "/var/lib/s");
	log_info("released %d", 2);
	log_debug("checked");
	log_error("clash");
}

/* The util logger's lines (the store's) through the daemons' sink: klog's, levels mapped. */
static void test_klog_sink(void **state)
{
	static const char *const msgs[] = { "store /var/lib/s: \"late\"\nwrite", "released 2", "checked",
					    "clash" };
	static const int vs[] = { 0, 0, KLOG_V_DEBUG, -1 };
	char buf[2048], *line = buf;

	(void)state;
	log_set_sink(klog_sink, NULL);
	klog_capture(KLOG_JSON, KLOG_V_DEBUG, emit_util_lines, buf, sizeof(buf));
	for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
		char *end = strchr(line, '\n');
		struct json_object *o, *v;

		assert_non_null(end);
		*end = '\0';
		o = json_tokener_parse(line);
		assert_non_null(o);
		assert_string_equal(json_object_get_string(json_object_object_get(o, "msg")), msgs[i]);
		assert_non_null(strstr(json_object_get_string(json_object_object_get(o, "caller")),
				       "test-nvipam-node.c:"));
		v = json_object_object_get(o, "v");
		if (vs[i] < 0)
			assert_non_null(json_object_object_get(o, "err"));
		else
			assert_int_equal(json_object_get_int(v), vs[i]);
		json_object_put(o);
		line = end + 1;
	}
	assert_string_equal(line, "");
	/* Below the debug verbosity the debug line is dropped; text: W, I, E. */
	klog_capture(KLOG_TEXT, KLOG_V_DEBUG - 1, emit_util_lines, buf, sizeof(buf));
	log_set_sink(NULL, NULL);
	assert_int_equal(buf[0], 'W');
	assert_non_null(strstr(buf, "] \"store /var/lib/s: \\\"late\\\"\\nwrite\"\nI"));
	assert_non_null(strstr(buf, "] \"released 2\"\nE"));
	assert_null(strstr(buf, "checked"));
}

static void test_conf(void **state)
{
	const char *argv[] = { "x", "--node-name=n", "--cni-log-file=/var/log/a\"b.log", "--cni-force-pool-name",
			 NULL };
	struct node_flags f;
	struct json_object *o;
	char err[64];
	char *text = NULL;

	(void)state;
	assert_int_equal(parse(argv, &f, err, sizeof(err)), 1);
	assert_int_equal(node_conf_text(&f, "/etc/cni/net.d/nv-ipam.d/node-pools.json", &text), 0);
	o = json_tokener_parse(text);
	assert_non_null(o);
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"daemonSocket\":\"unix:\\/\\/\\/var\\/lib\\/cni\\/nv-ipam\\/daemon.sock\","
			    "\"daemonCallTimeoutSeconds\":5,\"logFile\":\"\\/var\\/log\\/a\\\"b.log\","
			    "\"logLevel\":\"info\",\"forcePoolName\":true,"
			    "\"storeFile\":\"\\/var\\/lib\\/cni\\/nv-ipam\\/store\","
			    "\"poolFile\":\"\\/etc\\/cni\\/net.d\\/nv-ipam.d\\/node-pools.json\"}");
	json_object_put(o);
	free(text);
}

/* --released-ip-cooldown: nv-ipam.conf's releasedIPCooldownSeconds, rounded up; 0 writes nothing. */
static void test_conf_cooldown(void **state)
{
	static const struct {
		const char *flag;
		int64_t seconds; /* -1: not written */
	} cases[] = { { "--released-ip-cooldown=30s", 30 }, { "--released-ip-cooldown=1500ms", 2 },
		      { "--released-ip-cooldown=0", -1 }, { "--v=0", -1 } };

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[] = { "x", "--node-name=n", cases[i].flag, NULL };
		struct json_object *o, *v = NULL;
		struct node_flags f;
		char err[64];
		char *text = NULL;

		assert_int_equal(parse(argv, &f, err, sizeof(err)), 1);
		assert_int_equal(node_conf_text(&f, "/p.json", &text), 0);
		o = json_tokener_parse(text);
		assert_non_null(o);
		if (cases[i].seconds < 0)
			assert_false(json_object_object_get_ex(o, "releasedIPCooldownSeconds", &v));
		else
			assert_true(json_object_object_get_ex(o, "releasedIPCooldownSeconds", &v) &&
				    json_object_get_int64(v) == cases[i].seconds);
		json_object_put(o);
		free(text);
	}
}

static const char pool_file[] =
	"{\"pools\":{"
	"\"p1\":{\"subnet\":\"10.0.0.0/24\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.16\","
	"\"gateway\":\"10.0.0.1\",\"exclusions\":[{\"startIP\":\"10.0.0.10\",\"endIP\":\"10.0.0.12\"}]},"
	"\"p2\":{\"subnet\":\"10.1.0.0/24\",\"startIP\":\"10.1.0.17\",\"endIP\":\"10.1.0.32\",\"gateway\":\"10.1.0.1\"},"
	"\"cidrpool/c1\":{\"cidr\":\"10.2.0.0/16\",\"prefix\":\"10.2.3.0/24\",\"gateway\":\"10.2.3.1\"}}}";

static void test_pool_sizes(void **state)
{
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };

	(void)state;
	assert_int_equal(nvipam_pools_parse(pool_file, strlen(pool_file), "f", &pools, &err), 0);
	/* 16 less 3 excluded less the gateway inside the block. */
	assert_int_equal(metrics_pool_size(&pools, "p1"), 12);
	/* The gateway outside the block costs nothing. */
	assert_int_equal(metrics_pool_size(&pools, "p2"), 16);
	/* A /24 prefix: .1 to .254, less the gateway. */
	assert_int_equal(metrics_pool_size(&pools, "cidrpool/c1"), 253);
	assert_int_equal(metrics_pool_size(&pools, "nope"), 0);
	nvipam_pools_free(&pools);
}

/* The same node after c1 was deleted. */
static const char pool_gone[] =
	"{\"pools\":{"
	"\"p1\":{\"subnet\":\"10.0.0.0/24\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.16\","
	"\"gateway\":\"10.0.0.1\",\"exclusions\":[{\"startIP\":\"10.0.0.10\",\"endIP\":\"10.0.0.12\"}]}}}";

static void test_metrics_text(void **state)
{
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };
	struct metrics m;
	char c1[] = "cidrpool/c1", old[] = "old";
	struct gc_pool_count counts[] = {
		{ .pool = c1, .allocated = 3, .missed = 1, .released = 2 },
		{ .pool = old, .allocated = 1 },
	};
	struct gc_result res = { .pools = counts, .n_pools = 2 };
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(metrics_init(&m), 0);
	assert_int_equal(nvipam_pools_parse(pool_file, strlen(pool_file), "f", &pools, &err), 0);
	assert_int_equal(metrics_set_pools(&m, &pools), 0);
	assert_int_equal(metrics_set_usage(&m, &res), 0);
	assert_int_equal(metrics_set_usage(&m, &res), 0);
	assert_int_equal(metrics_render(&m, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "# TYPE nv_ipam_node_pool_size gauge\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_size{pool=\"c1\",type=\"cidrpool\"} 253\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_allocated{pool=\"c1\",type=\"cidrpool\"} 3\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_free{pool=\"c1\",type=\"cidrpool\"} 250\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_stale{pool=\"c1\",type=\"cidrpool\"} 1\n"));
	/* A counter adds up the passes. */
	assert_non_null(strstr(text, "nv_ipam_node_cleaner_released_total{pool=\"c1\",type=\"cidrpool\"} 4\n"));
	/* A pool gone from the file still holding an address stays in view. */
	assert_non_null(strstr(text, "nv_ipam_node_pool_allocated{pool=\"old\",type=\"ippool\"} 1\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_size{pool=\"old\",type=\"ippool\"} 0\n"));
	assert_non_null(strstr(text, "nv_ipam_node_ready 0\n"));
	assert_non_null(strstr(text, "process_resident_memory_bytes "));
	free(text);
	nvipam_pools_free(&pools);

	/* The pool is deleted while a pod still holds one of its addresses: size 0, free 0. */
	assert_int_equal(nvipam_pools_parse(pool_gone, strlen(pool_gone), "f", &pools, &err), 0);
	assert_int_equal(metrics_set_pools(&m, &pools), 0);
	assert_int_equal(metrics_render(&m, &text, &len), 0);
	assert_non_null(strstr(text, "nv_ipam_node_pool_size{pool=\"c1\",type=\"cidrpool\"} 0\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_free{pool=\"c1\",type=\"cidrpool\"} 0\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_allocated{pool=\"c1\",type=\"cidrpool\"} 3\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_size{pool=\"p1\",type=\"ippool\"} 12\n"));
	free(text);
	nvipam_pools_free(&pools);
	metrics_free(&m);
}

/* An IPv6 /64 block: its size and free are past a float's 53 bits, allocated is not. */
static void test_metrics_v6_sizes(void **state)
{
	static const char v6[] = "{\"pools\":{\"v6\":{\"subnet\":\"fd00::/48\",\"startIP\":\"fd00:0:0:1::1\","
				 "\"endIP\":\"fd00:0:0:1:ffff:ffff:ffff:fffe\",\"gateway\":\"fd00::1\"}}}";
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };
	struct metrics m;
	char name[] = "v6";
	struct gc_pool_count counts[] = { { .pool = name, .allocated = 2 } };
	struct gc_result res = { .pools = counts, .n_pools = 1 };
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(metrics_init(&m), 0);
	assert_int_equal(nvipam_pools_parse(v6, strlen(v6), "f", &pools, &err), 0);
	assert_int_equal(metrics_set_pools(&m, &pools), 0);
	assert_int_equal(metrics_set_usage(&m, &res), 0);
	assert_int_equal(metrics_render(&m, &text, &len), 0);
	assert_non_null(strstr(text, "nv_ipam_node_pool_size{pool=\"v6\",type=\"ippool\"} 18446744073709551614\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_free{pool=\"v6\",type=\"ippool\"} 18446744073709551612\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_allocated{pool=\"v6\",type=\"ippool\"} 2\n"));
	free(text);
	nvipam_pools_free(&pools);
	metrics_free(&m);
}

/* The gauge of pools whose blocks on the node overlap: per pool, how many others. */
static void test_metrics_overlap(void **state)
{
	static const char file[] =
		"{\"pools\":{"
		"\"p1\":{\"subnet\":\"10.0.0.0/24\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.16\"},"
		"\"p2\":{\"subnet\":\"10.0.0.0/25\",\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.16\"},"
		"\"p3\":{\"subnet\":\"10.0.0.0/24\",\"startIP\":\"10.0.0.17\",\"endIP\":\"10.0.0.32\"},"
		"\"cidrpool/c1\":{\"cidr\":\"10.0.0.0/16\",\"prefix\":\"10.0.0.0/28\"}}}";
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };
	struct metrics m;
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(metrics_init(&m), 0);
	assert_int_equal(nvipam_pools_parse(file, strlen(file), "f", &pools, &err), 0);
	assert_int_equal(metrics_set_pools(&m, &pools), 0);
	assert_int_equal(metrics_render(&m, &text, &len), 0);
	assert_non_null(strstr(text, "# TYPE nv_ipam_node_pool_overlapping gauge\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_overlapping{pool=\"p1\",type=\"ippool\"} 2\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_overlapping{pool=\"p2\",type=\"ippool\"} 2\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_overlapping{pool=\"p3\",type=\"ippool\"} 0\n"));
	assert_non_null(strstr(text, "nv_ipam_node_pool_overlapping{pool=\"c1\",type=\"cidrpool\"} 2\n"));
	free(text);
	nvipam_pools_free(&pools);
	/* The file changes: the counts follow it. */
	assert_int_equal(nvipam_pools_parse(pool_file, strlen(pool_file), "f", &pools, &err), 0);
	assert_int_equal(metrics_set_pools(&m, &pools), 0);
	assert_int_equal(metrics_render(&m, &text, &len), 0);
	assert_non_null(strstr(text, "nv_ipam_node_pool_overlapping{pool=\"p1\",type=\"ippool\"} 0\n"));
	assert_null(strstr(text, "nv_ipam_node_pool_overlapping{pool=\"p3\""));
	free(text);
	nvipam_pools_free(&pools);
	metrics_free(&m);
}

/* The open-file soft limit goes up to the hard one: three servers of 512 connections. */
static void test_raise_nofile(void **state)
{
	struct rlimit rl;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max < 64)
		skip();
	rl.rlim_cur = 32;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_int_equal(daemon_raise_nofile(), (long)rl.rlim_max);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_true(rl.rlim_cur == rl.rlim_max);
}

static void test_bind_addresses(void **state)
{
	struct sockaddr_storage sa;
	socklen_t len;

	(void)state;
	assert_int_equal(serve_parse_address(":8081", &sa, &len), 0);
	assert_int_equal(sa.ss_family, AF_INET6);
	assert_int_equal(serve_parse_address("127.0.0.1:0", &sa, &len), 0);
	assert_int_equal(sa.ss_family, AF_INET);
	assert_int_equal(serve_parse_address("[::1]:9", &sa, &len), 0);
	assert_int_equal(sa.ss_family, AF_INET6);
	assert_int_equal(serve_parse_address("0", &sa, &len), 0);
	assert_int_equal(len, 0);
	assert_int_equal(serve_parse_address("8080", &sa, &len), -EINVAL);
	assert_int_equal(serve_parse_address("::1:80", &sa, &len), -EINVAL);
	assert_int_equal(serve_parse_address("host:80", &sa, &len), -EINVAL);
	assert_int_equal(serve_parse_address(":65536", &sa, &len), -EINVAL);
}

/* @e emptied: the first failure recorded wins. */
static struct cni_err *fresh(struct cni_err *e)
{
	*e = (struct cni_err){ 0 };
	return e;
}

/* One owner lock per store: a second taker is refused, a file replaced is no longer held. */
static void test_owner_lock(void **state)
{
	char dir[] = "/tmp/test-ipam-node.XXXXXX", store[64], owner[96], other[64];
	struct cni_err e = { 0 };
	struct node_flags f = { 0 }, g = { 0 };
	struct node a = { .flags = &f, .owner_fd = -1 }, b = { .flags = &f, .owner_fd = -1 };
	struct node c = { .flags = &g, .owner_fd = -1 };
	struct timespec t0, t1;
	sigset_t sigs;
	long ms;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(store, sizeof(store), "%s/store", dir);
	snprintf(owner, sizeof(owner), "%s.owner", store);
	f.store_file = store;
	assert_false(node_owner_held(&a));
	assert_int_equal(node_owner_lock(&a, &e), 0);
	assert_true(node_owner_held(&a));
	assert_int_equal(node_owner_lock(&b, fresh(&e)), -EWOULDBLOCK);
	assert_non_null(strstr(e.msg, "another ipam-node holds the owner lock"));
	assert_non_null(strstr(e.msg, owner));
	/* Waited for (no signal of @sigs comes), then refused. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(node_lock_wait(&b, node_owner_lock, 120, &sigs, fresh(&e)), -EWOULDBLOCK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 120);
	/* Released by its holder: the next one takes it. */
	close(a.owner_fd);
	a.owner_fd = -1;
	assert_int_equal(node_lock_wait(&b, node_owner_lock, 120, &sigs, fresh(&e)), 0);
	assert_true(node_owner_held(&b));
	/* Removed and made anew: whoever locks the new file would own the store too. */
	assert_int_equal(unlink(owner), 0);
	assert_false(node_owner_held(&b));
	close(b.owner_fd);
	assert_int_equal(unlink(owner), -1);
	/* Not a regular file, or a link: refused, named. */
	snprintf(other, sizeof(other), "%s/s2", dir);
	g.store_file = other;
	snprintf(owner, sizeof(owner), "%s.owner", other);
	assert_int_equal(mkfifo(owner, 0600), 0);
	assert_int_equal(node_owner_lock(&c, fresh(&e)), -EINVAL);
	assert_non_null(strstr(e.msg, owner));
	assert_int_equal(unlink(owner), 0);
	assert_int_equal(symlink("/dev/zero", owner), 0);
	assert_int_equal(node_owner_lock(&c, fresh(&e)), -ELOOP);
	assert_non_null(strstr(e.msg, "symbolic link"));
	assert_int_equal(unlink(owner), 0);
	assert_int_equal(c.owner_fd, -1);
	assert_int_equal(rmdir(dir), 0);
}

/* The start's checks of the install source and the directories: nothing is created. */
static void test_start_checks(void **state)
{
	char dir[] = "/tmp/test-ipam-node.XXXXXX", path[128], file[96], sub[128];
	struct node_flags f = { .cni_skip_binary_copy = false };
	struct cni_err err = { 0 };
	struct stat st;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* A directory that does not exist yet, under one that can be written: fine, not made. */
	snprintf(path, sizeof(path), "%s/a/b", dir);
	assert_int_equal(node_check_dir(path, "cni-conf-dir", &err), 0);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	assert_int_equal(stat(sub, &st), -1);
	/* Under a regular file: refused, naming the flag and the file. */
	snprintf(file, sizeof(file), "%s/f", dir);
	fp = fopen(file, "w");
	assert_non_null(fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/d", file);
	assert_int_equal(node_check_dir(path, "cni-conf-dir", &err), -ENOTDIR);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "cni-conf-dir"));
	assert_non_null(strstr(err.msg, file));
	err = (struct cni_err){ 0 };
	assert_int_equal(node_check_dir("relative", "cni-bin-dir", &err), -EINVAL);
	/* nv-ipam without nv-ipam-tool beside it: the tool named. */
	f.cni_nv_ipam_bin_file = file;
	err = (struct cni_err){ 0 };
	assert_int_equal(node_check_install(&f, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "nv-ipam-tool"));
	snprintf(path, sizeof(path), "%s/nv-ipam-tool", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(node_check_install(&f, &err), 0);
	/* A directory as the bin file: refused, naming the file to give; skipped: not looked at. */
	f.cni_nv_ipam_bin_file = dir;
	err = (struct cni_err){ 0 };
	assert_int_equal(node_check_install(&f, &err), -EISDIR);
	assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	assert_non_null(strstr(err.msg, "is a directory: it names the nv-ipam binary itself"));
	f.cni_skip_binary_copy = true;
	assert_int_equal(node_check_install(&f, &err), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags_daemonset),
		cmocka_unit_test(test_flags_spellings),
		cmocka_unit_test(test_flags_errors),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_klog_json),
		cmocka_unit_test(test_klog_text),
		cmocka_unit_test(test_klog_sink),
		cmocka_unit_test(test_conf),
		cmocka_unit_test(test_conf_cooldown),
		cmocka_unit_test(test_pool_sizes),
		cmocka_unit_test(test_metrics_text),
		cmocka_unit_test(test_metrics_v6_sizes),
		cmocka_unit_test(test_metrics_overlap),
		cmocka_unit_test(test_raise_nofile),
		cmocka_unit_test(test_bind_addresses),
		cmocka_unit_test(test_owner_lock),
		cmocka_unit_test(test_start_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
