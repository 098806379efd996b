/*
 * The kernel's own share of a bandwidth plugin's run, measured in one process: the work of
 * an ADD that shapes both ways (a tbf at the host link's root; an ifb made and up, the host
 * link's ingress qdisc, the u32 redirect to the ifb, a tbf on the ifb) and of one that shapes
 * the egress only, as our plugin and upstream's send it, and of a DEL (the ifb deleted: the
 * kernel unregisters a link). The host link's qdiscs are taken off between runs, untimed.
 * Run in the node's netns; prints medians, then them as JSON.
 *
 * Exec'd by bench as a plugin (CNI_COMMAND set), it does that work and nothing else on the
 * link tests/bench/run-meta.sh makes (nfh0): ADD shapes both ways, or the egress only when
 * the config on stdin has no "ingressRate"; DEL deletes the ifb. Its row beside ours and
 * the reference's is the floor under any plugin that builds the same: being exec'd, and
 * the kernel's work, in the same run.
 *
 * Usage: tc-floor HOST_LINK [ITERATIONS]
 */
#include <errno.h>
#include <stdbool.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_mirred.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/net/link.h"
#include "common/tc/tc.h"

#define IFB "nffloor0"

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The ADD's kernel work, in the plugin's order. */
static int shape(const struct net_link *host, const struct tc_tbf *t, bool ingress)
{
	struct net_link ifb;
	int r;

	if ((ingress && (r = tc_qdisc_add_tbf(NULL, host->ifindex, t)) < 0) ||
	    (r = tc_ifb_create(NULL, IFB, host->mtu)) < 0 ||
	    (r = net_link_get_by_name(NULL, IFB, &ifb)) < 0 ||
	    (r = tc_qdisc_add_ingress(NULL, host->ifindex)) < 0)
		return r;
	const struct tc_redirect_action acts[] = {
		{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_STOLEN, .ifindex = ifb.ifindex },
		{ .eaction = TCA_EGRESS_REDIR, .action = TC_ACT_OK, .ifindex = ifb.ifindex },
	};
	if ((r = tc_filter_add_redirect(NULL, host->ifindex, TC_HANDLE(0xffff, 0), 1,
					TC_HANDLE(1, 1), acts, 2)) < 0)
		return r;
	return tc_qdisc_add_tbf(NULL, ifb.ifindex, t);
}

/* One run as a plugin: the command's kernel work, and a result for ADD. */
static int as_plugin(const char *cmd, const struct net_link *host, const struct tc_tbf *t)
{
	char conf[16384];
	size_t len = fread(conf, 1, sizeof(conf) - 1, stdin);
	int r;

	conf[len] = '\0';
	if (strcmp(cmd, "ADD") == 0) {
		r = shape(host, t, strstr(conf, "\"ingressRate\"") != NULL);
		if (r >= 0)
			printf("{\"cniVersion\":\"1.0.0\"}\n");
	} else {
		r = strcmp(cmd, "DEL") == 0 ? tc_ifb_delete(NULL, IFB) : 0;
	}
	if (r < 0)
		fprintf(stderr, "tc-floor: %s: %s\n", cmd, strerror(-r));
	return r < 0;
}

int main(int argc, char **argv)
{
	const char *cmd = getenv("CNI_COMMAND");
	int n = argc > 2 ? atoi(argv[2]) : 40;
	struct net_link host;
	struct tc_tbf t = { .rate = 1000000, .limit = 25000 };
	const char *link = cmd ? "nfh0" : argv[1];
	int64_t *both, *egress, *del;
	int r;

	if (!cmd && argc < 2) {
		fprintf(stderr, "usage: tc-floor HOST_LINK [ITERATIONS]\n");
		return 2;
	}
	if (n < 1)
		n = 1;
	if ((r = net_link_get_by_name(NULL, link, &host)) < 0 || (r = tc_ticks(80000, &t.buffer)) < 0) {
		fprintf(stderr, "tc-floor: %s: %s\n", link, strerror(-r));
		return 2;
	}
	if (cmd)
		return as_plugin(cmd, &host, &t);
	both = calloc((size_t)n, sizeof(*both));
	egress = calloc((size_t)n, sizeof(*egress));
	del = calloc((size_t)(2 * n), sizeof(*del));
	if (!both || !egress || !del)
		return 2;
	/* Both ways, then egress only, in turn. */
	for (int i = 0; i < 2 * n; i++) {
		int64_t t0 = now_us();

		r = shape(&host, &t, i % 2 == 0);
		(i % 2 == 0 ? both : egress)[i / 2] = now_us() - t0;
		t0 = now_us();
		if (r >= 0)
			r = tc_ifb_delete(NULL, IFB);
		del[i] = now_us() - t0;
		tc_qdisc_delete(NULL, host.ifindex, TC_HANDLE_ROOT);
		tc_qdisc_delete(NULL, host.ifindex, TC_HANDLE_INGRESS);
		if (r < 0) {
			tc_ifb_delete(NULL, IFB);
			fprintf(stderr, "tc-floor: %s\n", strerror(-r));
			return 1;
		}
	}
	qsort(both, (size_t)n, sizeof(*both), cmp);
	qsort(egress, (size_t)n, sizeof(*egress), cmp);
	qsort(del, (size_t)(2 * n), sizeof(*del), cmp);
	printf("kernel floor, median of %d in one process: a bandwidth ADD's tc work %lld us (both ways), "
	       "%lld us (egress only); a DEL's (the ifb's deletion) %lld us\n", n, (long long)both[n / 2],
	       (long long)egress[n / 2], (long long)del[n]);
	printf("{\"add_both_us\":%lld,\"add_egress_us\":%lld,\"del_us\":%lld}\n", (long long)both[n / 2],
	       (long long)egress[n / 2], (long long)del[n]);
	free(both);
	free(egress);
	free(del);
	return 0;
}
