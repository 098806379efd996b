/* Benchmark harness: execs CNI plugins as a runtime does and times ADD/DEL */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/bench/plugin-exec.h"

#define MAX_PLUGINS 8
#define MAX_CONFIGS 8
#define LABEL_TOKEN "%LABEL%"

enum cni_cmd { CMD_ADD, CMD_DEL, CMD_COUNT };

static const char *const cmd_names[CMD_COUNT] = { "ADD", "DEL" };

struct plugin {
	const char *label;
	const char *path;
};

struct options {
	struct plugin plugins[MAX_PLUGINS];
	size_t n_plugins;
	const char *configs[MAX_CONFIGS];
	size_t n_configs;
	const char *netns;
	const char *ifname;
	const char *cni_path;
	const char *cni_args;
	const char *container_id;
	unsigned long iterations;
	unsigned long warmup;
	bool json;
	const char *json_file;
	const char *after_del;
};

/* Figures for one (config, plugin, command). */
struct series {
	int64_t *ns;		/* successful measured runs */
	size_t runs;
	unsigned long failures;
	long peak_rss_kib;
	bool reported;
};

struct summary {
	int64_t min, median, p90;
};

/* build_env()'s six CNI_* variables, the node settings file, PATH and the terminator. */
#define ENV_MAX 9
static char *env_add[ENV_MAX], *env_del[ENV_MAX];
static struct exec_result result;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: bench --plugin LABEL=PATH [--plugin LABEL=PATH ...] --config FILE [--config FILE ...]\n"
		"             --netns PATH [options]\n"
		"Execs each plugin as a CNI runtime does (vfork-style posix_spawn + execve, clean environment, config on\n"
		"stdin, result on stdout, wait4 for rusage) and times ADD then DEL per iteration.\n"
		"The environment holds the CNI_* variables and, when set, CNI_RDMA_PLUGINS_CONF and PATH.\n"
		"Plugins are interleaved within each iteration, starting with a different one each time.\n"
		"\n"
		"  --plugin LABEL=PATH  plugin binary to measure, repeatable (up to %d)\n"
		"  --config FILE        network config JSON, repeatable (up to %d); one table each.\n"
		"                       %s in it is replaced by the plugin's label\n"
		"  --netns PATH         CNI_NETNS (required)\n"
		"  --ifname NAME        CNI_IFNAME (default eth0)\n"
		"  --cni-path DIRS      CNI_PATH (default: $CNI_PATH, else /opt/cni/bin)\n"
		"  --cni-args ARGS      CNI_ARGS (default empty)\n"
		"  --container-id ID    CNI_CONTAINERID (default bench-<pid>)\n"
		"  --iterations N       measured ADD/DEL pairs per plugin and config (default 200)\n"
		"  --warmup N           unmeasured pairs before them (default 10)\n"
		"  --json[=FILE]        JSON figures on stdout instead of tables, or into FILE besides them\n"
		"  --after-del CMD      a shell command run after each DEL, not timed: what the rest of\n"
		"                       a chain does between two pods (a meta plugin's veth deleted)\n"
		"  --help               this text\n"
		"\n"
		"Latencies (us) and peak RSS (KiB; wait4's ru_maxrss, so the largest of the plugin and\n"
		"the delegates it reaped, e.g. IPAM) cover successful measured runs only. A run that\n"
		"could not be exec'd, exited non-zero, or (ADD) printed no JSON object on stdout is a\n"
		"failure; the first one per plugin and command is shown on stderr. DEL runs after a\n"
		"failed ADD, as a runtime does.\n"
		"Exit status: 0 all runs succeeded, 1 some run failed, 2 usage or harness error.\n",
		MAX_PLUGINS, MAX_CONFIGS, LABEL_TOKEN);
}

static int parse_count(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	*out = strtoul(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static int add_plugin(struct options *o, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1] || o->n_plugins == MAX_PLUGINS)
		return -EINVAL;
	*eq = '\0';
	o->plugins[o->n_plugins].label = arg;
	o->plugins[o->n_plugins].path = eq + 1;
	o->n_plugins++;
	return 0;
}

enum { OPT_PLUGIN = 256, OPT_CONFIG, OPT_NETNS, OPT_IFNAME, OPT_CNI_PATH, OPT_CNI_ARGS,
       OPT_CONTAINER_ID, OPT_ITERATIONS, OPT_WARMUP, OPT_JSON, OPT_AFTER_DEL, OPT_HELP };

static const struct option long_opts[] = {
	{ "plugin", required_argument, NULL, OPT_PLUGIN },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "netns", required_argument, NULL, OPT_NETNS },
	{ "ifname", required_argument, NULL, OPT_IFNAME },
	{ "cni-path", required_argument, NULL, OPT_CNI_PATH },
	{ "cni-args", required_argument, NULL, OPT_CNI_ARGS },
	{ "container-id", required_argument, NULL, OPT_CONTAINER_ID },
	{ "iterations", required_argument, NULL, OPT_ITERATIONS },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "json", optional_argument, NULL, OPT_JSON },
	{ "after-del", required_argument, NULL, OPT_AFTER_DEL },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int apply_option(struct options *o, int c, char *arg)
{
	switch (c) {
	case OPT_PLUGIN:
		return add_plugin(o, arg);
	case OPT_CONFIG:
		if (o->n_configs == MAX_CONFIGS)
			return -EINVAL;
		o->configs[o->n_configs++] = arg;
		return 0;
	case OPT_NETNS:
		o->netns = arg;
		return 0;
	case OPT_IFNAME:
		o->ifname = arg;
		return 0;
	case OPT_CNI_PATH:
		o->cni_path = arg;
		return 0;
	case OPT_CNI_ARGS:
		o->cni_args = arg;
		return 0;
	case OPT_CONTAINER_ID:
		o->container_id = arg;
		return 0;
	case OPT_ITERATIONS:
		return parse_count(arg, &o->iterations);
	case OPT_WARMUP:
		return parse_count(arg, &o->warmup);
	case OPT_JSON:
		o->json = true;
		o->json_file = arg;
		return 0;
	case OPT_AFTER_DEL:
		o->after_del = arg;
		return 0;
	default:
		return -EINVAL;
	}
}

/* Returns 1 when --help was given, 0 to run, -EINVAL on bad usage. */
static int parse_options(struct options *o, int argc, char **argv)
{
	int c, ret;

	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		if (c == OPT_HELP)
			return 1;
		if (c == '?')
			return -EINVAL;
		ret = apply_option(o, c, optarg);
		if (ret < 0) {
			fprintf(stderr, "bench: bad value for --%s: %s\n",
				long_opts[c - OPT_PLUGIN].name, optarg ? optarg : "");
			return ret;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "bench: unexpected argument: %s\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->n_plugins || !o->n_configs || !o->netns || !o->iterations) {
		fprintf(stderr, "bench: --plugin, --config and --netns are required, --iterations > 0\n");
		return -EINVAL;
	}
	return 0;
}

static int read_file(const char *path, char **buf, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t cap = 4096, n = 0, got;
	char *b = NULL, *nb;
	int ret = 0;

	if (!f)
		return -errno;
	do {
		nb = realloc(b, cap + 1);
		if (!nb) {
			ret = -ENOMEM;
			break;
		}
		b = nb;
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (n == cap)
			cap *= 2;
	} while (got);
	if (!ret && ferror(f))
		ret = -EIO;
	fclose(f);
	if (ret) {
		free(b);
		return ret;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* Copy of @conf with every LABEL_TOKEN replaced by @label. */
static char *substitute_label(const char *conf, const char *label)
{
	size_t tlen = strlen(LABEL_TOKEN), llen = strlen(label), count = 0;
	const char *p, *hit;
	char *out, *w;

	for (p = conf; (hit = strstr(p, LABEL_TOKEN)); p = hit + tlen)
		count++;
	out = malloc(strlen(conf) + count * llen + 1);
	if (!out)
		return NULL;
	w = out;
	for (p = conf; (hit = strstr(p, LABEL_TOKEN)); p = hit + tlen) {
		memcpy(w, p, (size_t)(hit - p));
		w += hit - p;
		memcpy(w, label, llen);
		w += llen;
	}
	strcpy(w, p);
	return out;
}

static int build_env(char **env, const char *cmd, const struct options *o)
{
	/* A runtime passes its own environment on, and with it the node settings file
	 * that lets a benchmark's configs keep their stores in a private directory, and
	 * PATH, where the meta plugins find the node's iptables (and upstream's nft): libcni's
	 * exec keeps os.Environ(). */
	const char *settings = getenv("CNI_RDMA_PLUGINS_CONF"), *path = getenv("PATH");
	int n = 0;

	if (asprintf(&env[n++], "CNI_COMMAND=%s", cmd) < 0 ||
	    asprintf(&env[n++], "CNI_CONTAINERID=%s", o->container_id) < 0 ||
	    asprintf(&env[n++], "CNI_NETNS=%s", o->netns) < 0 ||
	    asprintf(&env[n++], "CNI_IFNAME=%s", o->ifname) < 0 ||
	    asprintf(&env[n++], "CNI_ARGS=%s", o->cni_args) < 0 ||
	    asprintf(&env[n++], "CNI_PATH=%s", o->cni_path) < 0 ||
	    (settings && asprintf(&env[n++], "CNI_RDMA_PLUGINS_CONF=%s", settings) < 0) ||
	    (path && asprintf(&env[n++], "PATH=%s", path) < 0))
		return -ENOMEM;
	env[n] = NULL;
	return 0;
}

static void report_failure(const char *config, const struct plugin *p, enum cni_cmd cmd,
			   const struct exec_result *r)
{
	char why[128];

	plugin_describe_failure(r, why, sizeof(why));
	fprintf(stderr, "bench: %s %s (%s) with config %s: %s (shown once per plugin and command)\n",
		p->label, cmd_names[cmd], p->path, config, why);
	if (r->out_len)
		fprintf(stderr, "--- stdout%s ---\n%.*s\n", r->out_trunc ? " (truncated)" : "",
			(int)r->out_len, r->out);
	if (r->err_len)
		fprintf(stderr, "--- stderr%s ---\n%.*s\n", r->err_trunc ? " (truncated)" : "",
			(int)r->err_len, r->err);
}

static void record(struct series *s, bool measured)
{
	if (!measured)
		return;
	if (plugin_failed(&result)) {
		s->failures++;
		return;
	}
	s->ns[s->runs++] = result.ns;
	if (result.maxrss_kib > s->peak_rss_kib)
		s->peak_rss_kib = result.maxrss_kib;
}

/* Returns 1 if the run failed, 0 if it succeeded, -errno on a harness error. */
static int run_one(const char *config_path, const struct plugin *p, const char *conf,
		   enum cni_cmd cmd, struct series *s, bool measured)
{
	int ret = plugin_exec(p->path, cmd == CMD_ADD ? env_add : env_del, conf, strlen(conf), &result);

	if (ret) {
		fprintf(stderr, "bench: running %s: %s\n", p->path, strerror(-ret));
		return ret;
	}
	if (cmd == CMD_ADD && !plugin_failed(&result) && !plugin_has_json(&result))
		result.no_result = true;
	if (plugin_failed(&result) && !s->reported) {
		report_failure(config_path, p, cmd, &result);
		s->reported = true;
	}
	record(s, measured);
	return plugin_failed(&result);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static struct summary summarize(struct series *s)
{
	struct summary r;
	size_t n = s->runs, p90 = (n * 9 + 9) / 10;

	qsort(s->ns, n, sizeof(*s->ns), cmp_i64);
	r.min = s->ns[0];
	r.median = n % 2 ? s->ns[n / 2] : (s->ns[n / 2 - 1] + s->ns[n / 2]) / 2;
	/* Nearest rank: the smallest sample with at least 90% of samples at or below it. */
	r.p90 = s->ns[p90 - 1];
	return r;
}

static void print_table_header(FILE *f, const char *config, const struct options *o)
{
	fprintf(f, "\n== %s: %lu iterations (+%lu warm-up), netns %s, ifname %s\n",
		config, o->iterations, o->warmup, o->netns, o->ifname);
	fprintf(f, "%-10s %-7s %6s %8s %10s %10s %10s %12s\n", "label", "command", "runs",
		"failures", "min us", "median us", "p90 us", "peak RSS KiB");
}

static void print_table_row(FILE *f, const struct plugin *p, enum cni_cmd cmd, struct series *s)
{
	struct summary sm;

	fprintf(f, "%-10s %-7s %6zu %8lu ", p->label, cmd_names[cmd], s->runs, s->failures);
	if (!s->runs) {
		fprintf(f, "%10s %10s %10s %12s\n", "-", "-", "-", "-");
		return;
	}
	sm = summarize(s);
	fprintf(f, "%10.0f %10.0f %10.0f %12ld\n", (double)sm.min / 1e3, (double)sm.median / 1e3,
		(double)sm.p90 / 1e3, s->peak_rss_kib);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void print_json_row(FILE *f, const char *config, const struct plugin *p, enum cni_cmd cmd,
			   struct series *s, bool first)
{
	struct summary sm;

	fprintf(f, "%s\n{\"config\":", first ? "" : ",");
	json_string(f, config);
	fprintf(f, ",\"label\":");
	json_string(f, p->label);
	fprintf(f, ",\"command\":\"%s\",\"runs\":%zu,\"failures\":%lu,", cmd_names[cmd], s->runs,
		s->failures);
	if (!s->runs) {
		fprintf(f, "\"min_us\":null,\"median_us\":null,\"p90_us\":null,\"peak_rss_kib\":null}");
		return;
	}
	sm = summarize(s);
	fprintf(f, "\"min_us\":%.1f,\"median_us\":%.1f,\"p90_us\":%.1f,\"peak_rss_kib\":%ld}",
		(double)sm.min / 1e3, (double)sm.median / 1e3, (double)sm.p90 / 1e3,
		s->peak_rss_kib);
}

/* series[config][plugin][command] */
static struct series *series_at(struct series *all, const struct options *o, size_t c, size_t p,
				enum cni_cmd cmd)
{
	return &all[(c * o->n_plugins + p) * CMD_COUNT + cmd];
}

static int load_configs(const struct options *o, const char *path, char **per_plugin)
{
	char *raw = NULL;
	size_t len = 0, p;
	int ret = read_file(path, &raw, &len);

	if (ret) {
		fprintf(stderr, "bench: reading %s: %s\n", path, strerror(-ret));
		return ret;
	}
	if (strlen(raw) != len) {
		fprintf(stderr, "bench: %s contains a NUL byte\n", path);
		free(raw);
		return -EINVAL;
	}
	for (p = 0; p < o->n_plugins; p++) {
		per_plugin[p] = substitute_label(raw, o->plugins[p].label);
		if (!per_plugin[p])
			ret = -ENOMEM;
	}
	free(raw);
	return ret;
}

/* One iteration: ADD then DEL for each plugin, rotating which plugin goes first. */
static int run_iteration(const struct options *o, size_t c, char **confs, struct series *all,
			 unsigned long it, bool measured)
{
	size_t k, p;
	int ret, failed = 0;

	for (k = 0; k < o->n_plugins; k++) {
		p = (it + k) % o->n_plugins;
		ret = run_one(o->configs[c], &o->plugins[p], confs[p], CMD_ADD,
			      series_at(all, o, c, p, CMD_ADD), measured);
		if (ret < 0)
			return ret;
		failed |= ret;
		ret = run_one(o->configs[c], &o->plugins[p], confs[p], CMD_DEL,
			      series_at(all, o, c, p, CMD_DEL), measured);
		if (ret < 0)
			return ret;
		failed |= ret;
		if (o->after_del && (ret = system(o->after_del)) != 0) {
			fprintf(stderr, "bench: --after-del exited with %d\n", ret);
			return -ECHILD;
		}
	}
	return failed;
}

static int run_config(const struct options *o, size_t c, struct series *all)
{
	char *confs[MAX_PLUGINS] = { NULL };
	unsigned long it;
	size_t p;
	int ret, failed = 0;

	ret = load_configs(o, o->configs[c], confs);
	for (it = 0; !ret && it < o->warmup + o->iterations; it++) {
		ret = run_iteration(o, c, confs, all, it, it >= o->warmup);
		if (ret > 0)
			failed = 1;
		ret = ret < 0 ? ret : 0;
	}
	for (p = 0; p < o->n_plugins; p++)
		free(confs[p]);
	return ret ? ret : failed;
}

static void print_tables(FILE *f, const struct options *o, struct series *all)
{
	size_t c, p;
	int cmd;

	for (c = 0; c < o->n_configs; c++) {
		print_table_header(f, o->configs[c], o);
		for (p = 0; p < o->n_plugins; p++)
			for (cmd = 0; cmd < CMD_COUNT; cmd++)
				print_table_row(f, &o->plugins[p], (enum cni_cmd)cmd,
						series_at(all, o, c, p, (enum cni_cmd)cmd));
	}
}

static long self_maxrss_kib(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? -1 : ru.ru_maxrss;
}

static void print_json(FILE *f, const struct options *o, struct series *all)
{
	size_t c, p;
	int cmd;
	bool first = true;

	fprintf(f, "{\"iterations\":%lu,\"warmup\":%lu,\"harness_maxrss_kib\":%ld,\"results\":[",
		o->iterations, o->warmup, self_maxrss_kib());
	for (c = 0; c < o->n_configs; c++)
		for (p = 0; p < o->n_plugins; p++)
			for (cmd = 0; cmd < CMD_COUNT; cmd++) {
				print_json_row(f, o->configs[c], &o->plugins[p], (enum cni_cmd)cmd,
					       series_at(all, o, c, p, (enum cni_cmd)cmd), first);
				first = false;
			}
	fprintf(f, "\n]}\n");
}

static int write_json_file(const struct options *o, struct series *all)
{
	FILE *f = fopen(o->json_file, "we");
	int ret = 0;

	if (!f)
		return -errno;
	print_json(f, o, all);
	if (ferror(f))
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

static int print_results(const struct options *o, struct series *all)
{
	int ret;

	if (o->json && !o->json_file) {
		print_json(stdout, o, all);
		return 0;
	}
	print_tables(stdout, o, all);
	printf("\nharness peak RSS %ld KiB\n",
	       self_maxrss_kib());
	if (!o->json_file)
		return 0;
	ret = write_json_file(o, all);
	if (ret)
		fprintf(stderr, "bench: writing %s: %s\n", o->json_file, strerror(-ret));
	return ret;
}

static struct series *alloc_series(const struct options *o)
{
	size_t n = o->n_configs * o->n_plugins * CMD_COUNT, i;
	struct series *all = calloc(n, sizeof(*all));

	if (!all)
		return NULL;
	for (i = 0; i < n; i++) {
		all[i].ns = calloc(o->iterations, sizeof(*all[i].ns));
		if (!all[i].ns) {
			while (i--)
				free(all[i].ns);
			free(all);
			return NULL;
		}
	}
	return all;
}

static void free_series(const struct options *o, struct series *all)
{
	size_t n = o->n_configs * o->n_plugins * CMD_COUNT, i;

	for (i = 0; i < n; i++)
		free(all[i].ns);
	free(all);
}

/* Pipes must not land on 0-2, or the child's dup2 onto them would be undone by O_CLOEXEC. */
static void ensure_std_fds(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
			exit(2);
}

static int setup(struct options *o, char *id_buf, size_t id_len)
{
	if (!o->ifname)
		o->ifname = "eth0";
	if (!o->cni_path)
		o->cni_path = getenv("CNI_PATH") ? getenv("CNI_PATH") : "/opt/cni/bin";
	if (!o->cni_args)
		o->cni_args = "";
	if (!o->container_id) {
		snprintf(id_buf, id_len, "bench-%ld", (long)getpid());
		o->container_id = id_buf;
	}
	/* A plugin that exits before reading stdin must not kill the harness. */
	signal(SIGPIPE, SIG_IGN);
	if (build_env(env_add, "ADD", o) || build_env(env_del, "DEL", o))
		return -ENOMEM;
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .iterations = 200, .warmup = 10 };
	struct series *all;
	char id_buf[32];
	int ret, failed = 0;
	size_t c;

	ensure_std_fds();
	ret = parse_options(&o, argc, argv);
	if (ret) {
		usage(ret > 0 ? stdout : stderr);
		return ret > 0 ? 0 : 2;
	}
	if (setup(&o, id_buf, sizeof(id_buf)))
		return 2;
	all = alloc_series(&o);
	if (!all)
		return 2;
	for (c = 0; c < o.n_configs; c++) {
		ret = run_config(&o, c, all);
		if (ret < 0)
			break;
		failed |= ret;
	}
	if (ret >= 0 && print_results(&o, all))
		ret = -EIO;
	free_series(&o, all);
	if (ret < 0)
		return 2;
	return failed ? 1 : 0;
}
