/* Benchmark of a plugin chain run as libcni runs a conflist, two builds interleaved */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/bench/plugin-exec.h"

#define MAX_STEPS 8
#define MAX_CHAINS 4
#define MAX_ITER 100000

/* One build of the chain: a binary per step, and the CNI_PATH its IPAM is found in. */
struct chain {
	const char *label;
	const char *bins[MAX_STEPS];
	const char *cni_path;
	int64_t *add_ns, *del_ns;
	size_t runs;
	size_t failures;
};

static const char *configs[MAX_STEPS]; /* each step's config, without prevResult */
static size_t n_steps;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bench-chain --config FILE [--config FILE...] --chain LABEL=BIN,BIN,...[@CNI_PATH]\n"
		"                   [--chain ...] --netns PATH [--ifname NAME] [--iterations N] [--warmup N]\n"
		"Runs each chain as libcni runs a conflist: ADD through the steps in order, each\n"
		"given the previous result as prevResult (spliced into its --config, which has\n"
		"none), then DEL in reverse order, each given the last result. Chains are run\n"
		"interleaved; prints the median and p90 wall time of a whole ADD and a whole DEL\n"
		"per chain, and each chain's ratio to the last one.\n");
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = calloc(1, CAPTURE_MAX);
	n = buf ? fread(buf, 1, CAPTURE_MAX - 1, f) : 0;
	fclose(f);
	while (buf && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return buf;
}

/* @base with ,"prevResult":@prev before its closing brace, into @out. */
static int splice(const char *base, const char *prev, size_t prev_len, char *out, size_t size)
{
	size_t len = strlen(base);
	int n;

	if (len == 0 || base[len - 1] != '}')
		return -EINVAL;
	n = snprintf(out, size, "%.*s,\"prevResult\":%.*s}", (int)(len - 1), base, (int)prev_len,
		     prev);
	return n < 0 || (size_t)n >= size ? -E2BIG : n;
}

static char *env_entry(const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 2;
	char *s = malloc(n);

	if (s)
		snprintf(s, n, "%s=%s", name, value);
	return s;
}

/* One ADD through the chain and one DEL back; the times of each, or -1 on a failure. */
static int run_once(struct chain *c, const char *netns, const char *ifname, int64_t *add_ns,
		    int64_t *del_ns)
{
	static struct exec_result r;
	static char last[CAPTURE_MAX], input[2 * CAPTURE_MAX];
	char *env[8] = { 0 };
	size_t last_len = 0;
	int64_t t0;
	int rc = -1, n;

	env[1] = env_entry("CNI_CONTAINERID", "benchchain");
	env[2] = env_entry("CNI_NETNS", netns);
	env[3] = env_entry("CNI_IFNAME", ifname);
	env[4] = env_entry("CNI_PATH", c->cni_path);
	env[5] = env_entry("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
	/* The node settings file a runtime's environment names: it lets the chain's
	 * host-local keep its store in the benchmark's own directory. */
	if (getenv("CNI_RDMA_PLUGINS_CONF"))
		env[6] = env_entry("CNI_RDMA_PLUGINS_CONF", getenv("CNI_RDMA_PLUGINS_CONF"));
	t0 = plugin_now_ns();
	free(env[0]);
	env[0] = env_entry("CNI_COMMAND", "ADD");
	for (size_t i = 0; i < n_steps; i++) {
		n = i == 0 ? (int)strlen(configs[0]) : splice(configs[i], last, last_len, input, sizeof(input));
		if (n < 0 || plugin_exec(c->bins[i], env, i == 0 ? configs[0] : input, (size_t)n, &r) < 0 ||
		    plugin_failed(&r)) {
			fprintf(stderr, "%s: ADD step %zu (%s) failed: %.*s\n", c->label, i, c->bins[i],
				(int)r.out_len, r.out);
			goto del;
		}
		memcpy(last, r.out, r.out_len);
		last_len = r.out_len;
	}
	*add_ns = plugin_now_ns() - t0;
	rc = 0;
del:
	t0 = plugin_now_ns();
	free(env[0]);
	env[0] = env_entry("CNI_COMMAND", "DEL");
	for (size_t i = n_steps; i-- > 0;) {
		n = last_len ? splice(configs[i], last, last_len, input, sizeof(input)) :
			       (int)strlen(configs[i]);
		if (n < 0 || plugin_exec(c->bins[i], env, last_len ? input : configs[i], (size_t)n, &r) < 0 ||
		    plugin_failed(&r)) {
			fprintf(stderr, "%s: DEL step %zu (%s) failed: %.*s\n", c->label, i, c->bins[i],
				(int)r.out_len, r.out);
			rc = -1;
		}
	}
	*del_ns = plugin_now_ns() - t0;
	for (size_t i = 0; i < 8; i++)
		free(env[i]);
	return rc;
}

static int parse_chain(char *spec, struct chain *c)
{
	char *eq = strchr(spec, '='), *at, *tok, *save = NULL;
	size_t n = 0;

	if (!eq)
		return -1;
	*eq = '\0';
	c->label = spec;
	at = strchr(eq + 1, '@');
	if (at) {
		*at = '\0';
		c->cni_path = at + 1;
	} else {
		c->cni_path = "";
	}
	for (tok = strtok_r(eq + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_STEPS)
			return -1;
		c->bins[n++] = tok;
	}
	return (int)n;
}

static void report(const struct chain *c, const struct chain *base)
{
	int64_t *v[2] = { c->add_ns, c->del_ns }, *b[2] = { base->add_ns, base->del_ns };
	const char *what[2] = { "ADD", "DEL" };

	for (int k = 0; k < 2; k++) {
		int64_t med = 0, p90 = 0, bmed = 0;

		if (c->runs > 0) {
			qsort(v[k], c->runs, sizeof(int64_t), cmp_i64);
			med = v[k][c->runs / 2];
			p90 = v[k][c->runs * 9 / 10];
		}
		if (base->runs > 0) {
			qsort(b[k], base->runs, sizeof(int64_t), cmp_i64);
			bmed = b[k][base->runs / 2];
		}
		printf("%-10s %-3s runs %4zu failures %3zu median %9.0f us p90 %9.0f us  /%s %.2f\n",
		       c->label, what[k], c->runs, c->failures, (double)med / 1e3, (double)p90 / 1e3,
		       base->label, bmed ? (double)med / (double)bmed : 0.0);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "chain", required_argument, NULL, 'C' },
		{ "netns", required_argument, NULL, 'n' }, { "ifname", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'N' }, { "warmup", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct chain chains[MAX_CHAINS] = { 0 };
	size_t n_chains = 0, iterations = 50, warmup = 3;
	const char *netns = NULL, *ifname = "net1";
	int o, failed = 0;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			if (n_steps == MAX_STEPS || !(configs[n_steps++] = read_file(optarg))) {
				fprintf(stderr, "cannot read %s\n", optarg);
				return 2;
			}
			break;
		case 'C':
			if (n_chains == MAX_CHAINS || parse_chain(optarg, &chains[n_chains++]) <= 0) {
				fprintf(stderr, "bad --chain %s\n", optarg);
				return 2;
			}
			break;
		case 'n': netns = optarg; break;
		case 'i': ifname = optarg; break;
		case 'N': iterations = strtoul(optarg, NULL, 10); break;
		case 'w': warmup = strtoul(optarg, NULL, 10); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!netns || n_steps == 0 || n_chains == 0 || iterations == 0 || iterations > MAX_ITER) {
		usage(stderr);
		return 2;
	}
	for (size_t k = 0; k < n_chains; k++) {
		chains[k].add_ns = calloc(iterations, sizeof(int64_t));
		chains[k].del_ns = calloc(iterations, sizeof(int64_t));
		if (!chains[k].add_ns || !chains[k].del_ns)
			return 2;
		for (size_t i = 0; i < n_steps; i++)
			if (!chains[k].bins[i]) {
				fprintf(stderr, "%s: %zu binaries for %zu configs\n", chains[k].label, i, n_steps);
				return 2;
			}
	}
	for (size_t it = 0; it < warmup + iterations; it++)
		for (size_t k = 0; k < n_chains; k++) {
			struct chain *c = &chains[k];
			int64_t a = 0, d = 0;

			if (run_once(c, netns, ifname, &a, &d) < 0) {
				c->failures++;
				failed = 1;
				continue;
			}
			if (it < warmup)
				continue;
			c->add_ns[c->runs] = a;
			c->del_ns[c->runs++] = d;
		}
	printf("chain of %zu plugins, %zu iterations after %zu warm-up, interleaved\n", n_steps,
	       iterations, warmup);
	for (size_t k = 0; k < n_chains; k++)
		report(&chains[k], &chains[n_chains - 1]);
	return failed;
}
