/*
 * Multi-rail benchmark driver: pods with one attachment per rail, each pod's ADDs one
 * after another as Multus makes them, many pods at once; then their DELs
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/bench/plugin-exec.h"

#define RAIL_TOKEN "%RAIL%"
#define MAX_RAILS 32
#define MAX_IPS_PER_ADD 4

struct options {
	const char *plugin;
	const char *label;
	const char *cni_path;
	const char *netns_prefix;
	const char *netns;    /* one netns for every pod (IPAM plugins do not enter it) */
	const char *settings; /* CNI_RDMA_PLUGINS_CONF, when set */
	char *templ;
	unsigned long rails;
	unsigned long pods;
	unsigned long parallel;
};

/* What one pod's ADDs (or DELs) did. */
struct pod {
	int64_t ns;
	bool failed;
	char ips[MAX_RAILS][MAX_IPS_PER_ADD][48];
};

struct run {
	const struct options *o;
	const char *command;
	struct pod *pods;
	unsigned long next; /* the next pod to take */
	pthread_mutex_t lock;
	bool reported;      /* the first failure was shown */
	char **confs;       /* one per rail */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: multirail --plugin PATH --config TEMPLATE (--netns-prefix PREFIX | --netns PATH)\n"
		"                 [options]\n"
		"Runs PODS pods, PARALLEL at a time; each pod gets RAILS attachments (CNI_IFNAME net1,\n"
		"net2, ...), its ADDs one after another as Multus makes them; then every pod's DELs,\n"
		"last rail first. Prints wall times, per-pod p50/p99, failures and any address given\n"
		"to two pods of one rail.\n"
		"\n"
		"  --plugin PATH        the interface plugin\n"
		"  --config FILE        network config; %s is replaced by the rail's number (0, 1, ...)\n"
		"  --netns-prefix P     pod i's netns is P<i>, made beforehand\n"
		"  --netns PATH         one netns for every pod (for IPAM plugins alone)\n"
		"  --cni-path DIRS      CNI_PATH (default /opt/cni/bin)\n"
		"  --label NAME         printed, and the start of the container IDs (default \"pod\")\n"
		"  --rails N            attachments per pod (default 8, at most %d)\n"
		"  --pods N             pods (default 100)\n"
		"  --parallel N         pods at once (default 16)\n"
		"  --help               this text\n"
		"CNI_RDMA_PLUGINS_CONF, when set, is passed to the plugins.\n"
		"Exit status: 0 when every ADD and DEL succeeded and no address was given twice, 1 otherwise.\n",
		RAIL_TOKEN, MAX_RAILS);
}

static int parse_count(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* @templ with every RAIL_TOKEN replaced by @rail. */
static char *for_rail(const char *templ, unsigned long rail)
{
	size_t tl = strlen(RAIL_TOKEN), n = 0;
	char num[24], *out, *o;
	const char *p;

	snprintf(num, sizeof(num), "%lu", rail);
	for (p = templ; (p = strstr(p, RAIL_TOKEN)); p += tl)
		n++;
	out = malloc(strlen(templ) + n * strlen(num) + 1);
	if (!out)
		return NULL;
	for (o = out, p = templ;;) {
		const char *hit = strstr(p, RAIL_TOKEN);
		size_t k = hit ? (size_t)(hit - p) : strlen(p);

		memcpy(o, p, k);
		o += k;
		if (!hit)
			break;
		memcpy(o, num, strlen(num));
		o += strlen(num);
		p = hit + tl;
	}
	*o = '\0';
	return out;
}

/* The "address" values of a result (a plain scan: enough for results we print). */
static void result_ips(const struct exec_result *r, char ips[MAX_IPS_PER_ADD][48])
{
	const char *p = r->out, *end = r->out + r->out_len;
	size_t n = 0;

	while (n < MAX_IPS_PER_ADD && p < end) {
		const char *k = memmem(p, (size_t)(end - p), "\"address\"", 9), *q, *e;

		if (!k)
			break;
		q = memchr(k + 9, '"', (size_t)(end - k - 9));
		e = q ? memchr(q + 1, '"', (size_t)(end - q - 1)) : NULL;
		if (!e)
			break;
		if ((size_t)(e - q - 1) < 48) {
			memcpy(ips[n], q + 1, (size_t)(e - q - 1));
			ips[n][e - q - 1] = '\0';
			n++;
		}
		p = e + 1;
	}
}

static void env_free(char **env)
{
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
}

static int env_build(char **env, const struct options *o, const char *command, unsigned long pod,
		     unsigned long rail)
{
	int n = 0;

	if (asprintf(&env[n++], "CNI_COMMAND=%s", command) < 0 ||
	    asprintf(&env[n++], "CNI_CONTAINERID=%s-%lu", o->label, pod) < 0 ||
	    (o->netns ? asprintf(&env[n++], "CNI_NETNS=%s", o->netns) :
			asprintf(&env[n++], "CNI_NETNS=%s%lu", o->netns_prefix, pod)) < 0 ||
	    asprintf(&env[n++], "CNI_IFNAME=net%lu", rail + 1) < 0 ||
	    asprintf(&env[n++], "CNI_PATH=%s", o->cni_path) < 0 ||
	    asprintf(&env[n++], "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=bench;K8S_POD_NAME=%s-%lu",
		     o->label, pod) < 0 ||
	    (o->settings && asprintf(&env[n++], "CNI_RDMA_PLUGINS_CONF=%s", o->settings) < 0))
		return -ENOMEM;
	env[n] = NULL;
	return 0;
}

/* One pod: its attachments in order (ADD: rail 0 first; DEL: the last rail first). */
static int run_pod(struct run *run, unsigned long i, struct exec_result *res)
{
	const struct options *o = run->o;
	bool add = strcmp(run->command, "ADD") == 0;
	struct pod *pod = &run->pods[i];
	int64_t start = plugin_now_ns();
	int r = 0;

	for (unsigned long k = 0; k < o->rails && !pod->failed; k++) {
		unsigned long rail = add ? k : o->rails - 1 - k;
		char *env[8] = { NULL };
		char why[128];

		r = env_build(env, o, run->command, i, rail);
		if (r == 0)
			r = plugin_exec(o->plugin, env, run->confs[rail], strlen(run->confs[rail]), res);
		env_free(env);
		if (r < 0)
			return r;
		if (add && !plugin_failed(res) && !plugin_has_json(res))
			res->no_result = true;
		if (plugin_failed(res)) {
			pod->failed = true;
			pthread_mutex_lock(&run->lock);
			if (!run->reported) {
				plugin_describe_failure(res, why, sizeof(why));
				fprintf(stderr, "multirail: %s %s of pod %lu, rail %lu: %s (shown once)\n%.*s%.*s\n",
					o->label, run->command, i, rail, why, (int)res->out_len, res->out,
					(int)res->err_len, res->err);
				run->reported = true;
			}
			pthread_mutex_unlock(&run->lock);
		} else if (add) {
			result_ips(res, pod->ips[rail]);
		}
	}
	pod->ns = plugin_now_ns() - start;
	return 0;
}

static void *worker(void *arg)
{
	struct run *run = arg;
	struct exec_result *res = malloc(sizeof(*res));

	if (!res)
		return (void *)(intptr_t)-ENOMEM;
	for (;;) {
		unsigned long i;

		pthread_mutex_lock(&run->lock);
		i = run->next++;
		pthread_mutex_unlock(&run->lock);
		if (i >= run->o->pods)
			break;
		if (run_pod(run, i, res) < 0) {
			free(res);
			return (void *)(intptr_t)-EIO;
		}
	}
	free(res);
	return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of @v (sorted). */
static int64_t percentile(const int64_t *v, size_t n, unsigned int p)
{
	size_t rank = (n * p + 99) / 100;

	return n ? v[rank ? rank - 1 : 0] : 0;
}

/* Runs one phase; prints its line. Return: the number of failed pods, or negative errno. */
static long phase(const struct options *o, char **confs, const char *command, struct pod *pods)
{
	struct run run = { .o = o, .command = command, .pods = pods, .confs = confs };
	pthread_t threads[256];
	int64_t start, wall, *times;
	unsigned long n_threads = o->parallel < o->pods ? o->parallel : o->pods;
	long failed = 0;
	int r = 0;

	pthread_mutex_init(&run.lock, NULL);
	for (unsigned long i = 0; i < o->pods; i++) {
		pods[i].failed = false;
		pods[i].ns = 0;
	}
	start = plugin_now_ns();
	for (unsigned long t = 0; t < n_threads; t++)
		if (pthread_create(&threads[t], NULL, worker, &run) != 0)
			return -EAGAIN;
	for (unsigned long t = 0; t < n_threads; t++) {
		void *ret;

		pthread_join(threads[t], &ret);
		if (ret)
			r = (int)(intptr_t)ret;
	}
	wall = plugin_now_ns() - start;
	pthread_mutex_destroy(&run.lock);
	if (r < 0)
		return r;
	times = malloc(o->pods * sizeof(*times));
	if (!times)
		return -ENOMEM;
	for (unsigned long i = 0; i < o->pods; i++) {
		times[i] = pods[i].ns;
		failed += pods[i].failed;
	}
	qsort(times, o->pods, sizeof(*times), cmp_i64);
	printf("%-6s %-4s pods %4lu x %2lu rails, %3lu at once: wall %7.0f ms   per pod p50 %6.1f ms  "
	       "p99 %6.1f ms   failed pods %ld\n",
	       o->label, command, o->pods, o->rails, o->parallel, (double)wall / 1e6,
	       (double)percentile(times, o->pods, 50) / 1e6, (double)percentile(times, o->pods, 99) / 1e6,
	       failed);
	free(times);
	return failed;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Addresses given to two pods of one rail. */
static unsigned long duplicates(const struct options *o, struct pod *pods)
{
	char **v = malloc(o->pods * MAX_IPS_PER_ADD * sizeof(*v));
	unsigned long dups = 0;

	if (!v)
		return 1;
	for (unsigned long r = 0; r < o->rails; r++) {
		size_t n = 0;

		for (unsigned long i = 0; i < o->pods; i++)
			for (int k = 0; k < MAX_IPS_PER_ADD; k++)
				if (pods[i].ips[r][k][0])
					v[n++] = pods[i].ips[r][k];
		qsort(v, n, sizeof(*v), cmp_str);
		for (size_t i = 1; i < n; i++)
			dups += strcmp(v[i - 1], v[i]) == 0;
	}
	free(v);
	return dups;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "plugin", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'c' },
		{ "netns-prefix", required_argument, NULL, 'n' },
		{ "netns", required_argument, NULL, 'N' },
		{ "cni-path", required_argument, NULL, 'P' },
		{ "label", required_argument, NULL, 'l' },
		{ "rails", required_argument, NULL, 'r' },
		{ "pods", required_argument, NULL, 'o' },
		{ "parallel", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct options o = { .label = "pod", .cni_path = "/opt/cni/bin", .rails = 8, .pods = 100,
			     .parallel = 16, .settings = getenv("CNI_RDMA_PLUGINS_CONF") };
	const char *config = NULL;
	char *confs[MAX_RAILS] = { NULL };
	struct pod *pods;
	long add_failed, del_failed;
	unsigned long dups;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int bad = 0;

		switch (c) {
		case 'p':
			o.plugin = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'n':
			o.netns_prefix = optarg;
			break;
		case 'N':
			o.netns = optarg;
			break;
		case 'P':
			o.cni_path = optarg;
			break;
		case 'l':
			o.label = optarg;
			break;
		case 'r':
			bad = parse_count(optarg, MAX_RAILS, &o.rails);
			break;
		case 'o':
			bad = parse_count(optarg, 100000, &o.pods);
			break;
		case 'j':
			bad = parse_count(optarg, 256, &o.parallel);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (bad) {
			fprintf(stderr, "multirail: invalid count \"%s\"\n", optarg);
			return 2;
		}
	}
	if (!o.plugin || !config || !o.netns_prefix == !o.netns) {
		usage(stderr);
		return 2;
	}
	o.templ = read_file(config);
	if (!o.templ) {
		fprintf(stderr, "multirail: cannot read %s\n", config);
		return 2;
	}
	for (unsigned long r = 0; r < o.rails; r++)
		if (!(confs[r] = for_rail(o.templ, r)))
			return 2;
	pods = calloc(o.pods, sizeof(*pods));
	if (!pods)
		return 2;
	add_failed = phase(&o, confs, "ADD", pods);
	if (add_failed < 0)
		return 2;
	dups = duplicates(&o, pods);
	del_failed = phase(&o, confs, "DEL", pods);
	if (del_failed < 0)
		return 2;
	printf("%-6s addresses given to two pods of one rail: %lu\n", o.label, dups);
	for (unsigned long r = 0; r < o.rails; r++)
		free(confs[r]);
	free(o.templ);
	free(pods);
	return add_failed || del_failed || dups ? 1 : 0;
}
