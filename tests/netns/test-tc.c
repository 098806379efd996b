/*
 * common/tc against the real kernel, in a network namespace of its own: the ifb
 * device, tbf and ingress qdiscs and the redirecting u32 filter upstream's bandwidth
 * builds, made here and read back with "ip -j" and "tc -j" and with tc_qdisc_list().
 * Exits 77 when a namespace cannot be created (not root).
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_mirred.h>

#include "common/net/link.h"
#include "common/tc/tc.h"
#include "common/util/cleanup.h"

static int n_pass, n_fail;

__attribute__((format(printf, 2, 3)))
static bool check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", n_pass + n_fail + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		n_pass++;
	else
		n_fail++;
	return ok;
}

/* The JSON a command prints, parsed; NULL when it prints none. */
static struct json_object *json_of(const char *cmd)
{
	char buf[65536];
	size_t len;
	FILE *p = popen(cmd, "r");

	if (!p)
		return NULL;
	len = fread(buf, 1, sizeof(buf) - 1, p);
	pclose(p);
	buf[len] = '\0';
	return json_tokener_parse(buf);
}

/* The string at a path of keys (and array indexes as "#N") in @o, "" when absent. */
static const char *at(struct json_object *o, const char *path)
{
	char key[64];

	for (const char *p = path; o && *p;) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (key[0] == '#')
			o = json_object_is_type(o, json_type_array) ?
				json_object_array_get_idx(o, (size_t)atoi(key + 1)) : NULL;
		else if (!json_object_object_get_ex(o, key, &o))
			o = NULL;
		p += n + (p[n] == '.');
	}
	return o ? json_object_get_string(o) : "";
}

int main(void)
{
	struct net_link host, ifb;
	struct tc_qdisc_info *q = NULL;
	struct json_object *j;
	size_t n = 0;
	uint32_t buffer;
	int r;

	if (unshare(CLONE_NEWNET) < 0) {
		printf("1..0 # SKIP cannot create a network namespace: %s\n", strerror(errno));
		return 77;
	}
	if (system("ip link add rm-h type veth peer name rm-p && ip link set rm-h up") != 0) {
		check(false, "a veth pair");
		return 1;
	}
	net_link_get_by_name(NULL, "rm-h", &host);

	/* The ifb: up, the pod link's MTU, no transmit queue. */
	r = tc_ifb_create(NULL, "rmifb0", 1400);
	check(r == 0, "ifb created: %d", r);
	check(tc_ifb_create(NULL, "rmifb0", 1400) == -EEXIST, "a second time: -EEXIST");
	j = json_of("ip -j -d link show rmifb0");
	check(strcmp(at(j, "#0.linkinfo.info_kind"), "ifb") == 0 && strcmp(at(j, "#0.mtu"), "1400") == 0 &&
	      (!*at(j, "#0.txqlen") || strcmp(at(j, "#0.txqlen"), "0") == 0) &&
	      strstr(at(j, "#0.flags"), "\"UP\""),
	      "ip -j shows an ifb, MTU 1400, txqlen 0, up: %s", json_object_to_json_string(j));
	json_object_put(j);
	net_link_get_by_name(NULL, "rmifb0", &ifb);

	/* Ingress shaping: tbf at the host link's root, 1 Mbit/s, a burst of 12.5 kB. */
	r = tc_ticks(100000, &buffer);
	check(r == 0 && buffer == 1562500, "100 ms is 1562500 ticks here: %d %u", r, buffer);
	r = tc_qdisc_add_tbf(NULL, host.ifindex, &(struct tc_tbf){ .rate = 125000, .limit = 15625,
								     .buffer = buffer });
	check(r == 0, "tbf on rm-h: %d", r);
	j = json_of("tc -j qdisc show dev rm-h root");
	check(strcmp(at(j, "#0.kind"), "tbf") == 0 && strcmp(at(j, "#0.handle"), "1:") == 0 &&
	      strcmp(at(j, "#0.options.rate"), "125000") == 0 &&
	      strcmp(at(j, "#0.options.burst"), "12500") == 0 &&
	      strcmp(at(j, "#0.options.lat"), "25000") == 0,
	      "tc -j shows tbf 1: rate 125000 B/s, burst 12500 B, latency 25 ms: %s",
	      json_object_to_json_string(j));
	json_object_put(j);
	r = tc_qdisc_list(NULL, host.ifindex, &q, &n);
	check(r == 0 && n == 1 && q[0].has_tbf && q[0].tbf.rate == 125000 && q[0].tbf.limit == 15625 &&
	      q[0].tbf.buffer == buffer && q[0].handle == TC_HANDLE(1, 0) &&
	      q[0].parent == TC_HANDLE_ROOT, "tc_qdisc_list reads it back: %d %zu", r, n);
	free(q);

	/* Egress shaping: ingress qdisc, everything redirected to the ifb, tbf there. */
	r = tc_qdisc_add_ingress(NULL, host.ifindex);
	check(r == 0, "ingress qdisc on rm-h: %d", r);
	check(tc_qdisc_add_ingress(NULL, host.ifindex) == -EEXIST, "a second one: -EEXIST");
	{
		/* Upstream's two actions: its RedirIndex's, then its own (action 0). */
		const struct tc_redirect_action acts[] = {
			{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_STOLEN, .ifindex = ifb.ifindex },
			{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_OK, .ifindex = ifb.ifindex },
		};

		r = tc_filter_add_redirect(NULL, host.ifindex, TC_HANDLE(0xffff, 0), 1, TC_HANDLE(1, 1),
					   acts, 2);
		check(r == 0, "u32 filter redirecting to rmifb0: %d", r);
	}
	j = json_of("tc -j filter show dev rm-h ingress");
	check(strcmp(at(j, "#2.kind"), "u32") == 0 && strcmp(at(j, "#2.protocol"), "all") == 0 &&
	      strcmp(at(j, "#2.pref"), "1") == 0 && strcmp(at(j, "#2.options.flowid"), "1:1") == 0 &&
	      strcmp(at(j, "#2.options.actions.#0.kind"), "mirred") == 0 &&
	      strcmp(at(j, "#2.options.actions.#0.to_dev"), "rmifb0") == 0 &&
	      strcmp(at(j, "#2.options.actions.#0.mirred_action"), "redirect") == 0 &&
	      strcmp(at(j, "#2.options.actions.#0.control_action.type"), "stolen") == 0 &&
	      strcmp(at(j, "#2.options.actions.#1.control_action.type"), "pass") == 0,
	      "tc -j shows u32 all, flowid 1:1, mirred redirect to rmifb0 (stolen, then pass): %s",
	      json_object_to_json_string(j));
	json_object_put(j);
	r = tc_qdisc_add_tbf(NULL, ifb.ifindex, &(struct tc_tbf){ .rate = 5000000000ull, .limit = 1 << 20,
								    .buffer = buffer });
	check(r == 0, "tbf on the ifb, 40 Gbit/s (past 32 bits): %d", r);
	r = tc_qdisc_list(NULL, ifb.ifindex, &q, &n);
	check(r == 0 && n == 1 && q[0].has_tbf && q[0].tbf.rate == 5000000000ull,
	      "its rate reads back whole: %d %zu %llu", r, n, n ? (unsigned long long)q[0].tbf.rate : 0);
	free(q);

	/* Undo and DEL. */
	check(tc_qdisc_delete(NULL, host.ifindex, TC_HANDLE_ROOT) == 0, "tbf deleted from rm-h");
	check(tc_qdisc_delete(NULL, host.ifindex, TC_HANDLE_ROOT) == -ENOENT, "again: -ENOENT");
	check(tc_qdisc_delete(NULL, host.ifindex, TC_HANDLE_INGRESS) == 0, "ingress deleted");
	check(tc_ifb_delete(NULL, "rm-h") == -EPERM, "a veth is not deleted as an ifb");
	check(tc_ifb_delete(NULL, "rmifb0") == 0, "ifb deleted");
	check(tc_ifb_delete(NULL, "rmifb0") == 0, "again: nothing to do");
	check(net_link_get_by_name(NULL, "rmifb0", &ifb) == -ENODEV, "it is gone");
	check(tc_qdisc_add_tbf(NULL, host.ifindex, &(struct tc_tbf){ .rate = 0, .buffer = 1 }) == -EINVAL,
	      "a zero rate is refused");
	printf("1..%d\n", n_pass + n_fail);
	return n_fail ? 1 : 0;
}
