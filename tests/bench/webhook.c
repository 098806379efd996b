/*
 * Benchmark of the validating webhook's review, in process: a CIDRPool whose
 * staticAllocations list 1,000 to 20,000 nodes (each twice, once each without a prefix,
 * once each with a valid prefix) and one that fills the API server's largest request
 * body (3 MiB). Each review runs in a child of its own so that its peak RSS is its own;
 * a child is stopped after 120 s or 3 GiB. Figures are printed, not asserted: the wall
 * time, and the CPU time of the review beside that of json-c's parse of the body alone
 * (the floor of any review that builds the tree: cjson_parse() and the tree's release),
 * which a loaded machine moves less.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/controller/admission.h"

#define API_BODY_MAX (3u << 20)
#define CHILD_SECONDS 120
#define CHILD_BYTES (3ull << 30)

enum shape {
	DUPLICATED, /* every node twice, without a prefix */
	DISTINCT,   /* every node once, without a prefix: an error each */
	VALID,      /* every node once with its own /24: allowed */
};

static const char *const shape_name[] = { "duplicated", "distinct", "valid" };

static double clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

static double cpu_ms(void)
{
	return clock_ms(CLOCK_PROCESS_CPUTIME_ID);
}

/* The review of a CIDRPool with @n static nodes (0: as many as 3 MiB hold). */
static char *review(enum shape shape, size_t n, size_t *ret_len)
{
	struct text_buf b = { 0 };
	size_t limit = n ? SIZE_MAX : API_BODY_MAX - 64;

	text_buf_puts(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
		      "\"request\":{\"uid\":\"bench\",\"kind\":{\"kind\":\"CIDRPool\"},"
		      "\"operation\":\"CREATE\",\"object\":{\"kind\":\"CIDRPool\",\"metadata\":"
		      "{\"name\":\"pool1\",\"namespace\":\"nvidia-network-operator\"},\"spec\":"
		      "{\"cidr\":\"10.0.0.0/8\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,"
		      "\"staticAllocations\":[");
	for (size_t i = 0; (n ? i < n : true) && b.len < limit; i++) {
		char e[96];

		if (shape == VALID)
			snprintf(e, sizeof(e), "%s{\"nodeName\":\"node-%05zu\",\"prefix\":\"10.%zu.%zu.0/24\"}",
				 i ? "," : "", i, i / 256 % 256, i % 256);
		else if (shape == DUPLICATED)
			snprintf(e, sizeof(e), "%s{\"nodeName\":\"node-%05zu\"},{\"nodeName\":\"node-%05zu\"}",
				 i ? "," : "", i, i);
		else
			snprintf(e, sizeof(e), "%s{\"nodeName\":\"node-%05zu\"}", i ? "," : "", i);
		text_buf_puts(&b, e);
	}
	text_buf_puts(&b, "]}}}}");
	text_buf_putc(&b, '\0');
	if (b.oom) {
		text_buf_free(&b);
		return NULL;
	}
	*ret_len = b.len - 1;
	return b.data;
}

/* In the child: one review; "ms bytes-answered" on @fd. */
static int run_child(enum shape shape, size_t n, int fd)
{
	struct admission_answer a = { 0 };
	struct rlimit as = { CHILD_BYTES, CHILD_BYTES };
	struct json_object *tree = NULL;
	struct cni_err err = { 0 };
	size_t len;
	char *body;
	double t0, c0, parse_cpu;
	char out[160];
	int r;

	setrlimit(RLIMIT_AS, &as);
	alarm(CHILD_SECONDS);
	body = review(shape, n, &len);
	if (!body)
		return 1;
	/* The floor: the body parsed into a tree and released, nothing judged. */
	c0 = cpu_ms();
	if (cjson_parse(body, len, "review", &tree, &err) == 0)
		json_object_put(tree);
	parse_cpu = cpu_ms() - c0;
	t0 = now_ms();
	c0 = cpu_ms();
	r = admission_review(ADMISSION_PATH_CIDRPOOL, body, len, &a);
	snprintf(out, sizeof(out), "%zu %.1f %.1f %.1f %zu %d\n", len, now_ms() - t0, cpu_ms() - c0,
		 parse_cpu, r ? 0 : a.len, a.allowed);
	if (write(fd, out, strlen(out)) < 0)
		return 1;
	admission_answer_free(&a);
	free(body);
	return r ? 1 : 0;
}

static void measure(enum shape shape, size_t n)
{
	struct rusage ru;
	char buf[128] = "", label[32];
	int p[2], status;
	size_t body = 0, answered = 0;
	double ms = 0, cpu = 0, parse = 0;
	int allowed = 0;
	pid_t pid;
	ssize_t got;

	if (n)
		snprintf(label, sizeof(label), "%zu", n);
	else
		snprintf(label, sizeof(label), "3 MiB body");
	if (pipe(p) < 0 || (pid = fork()) < 0) {
		perror("bench-webhook");
		exit(1);
	}
	if (pid == 0) {
		close(p[0]);
		_exit(run_child(shape, n, p[1]));
	}
	close(p[1]);
	got = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("bench-webhook");
		exit(1);
	}
	if (got > 0 && sscanf(buf, "%zu %lf %lf %lf %zu %d", &body, &ms, &cpu, &parse, &answered,
			      &allowed) == 6 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		printf("%-11s %-11s %9zu %10.1f %8.1f %9.1f %10ld %12zu  %s\n", shape_name[shape], label,
		       body, ms, cpu, parse, ru.ru_maxrss / 1024, answered, allowed ? "allowed" : "denied");
	else
		printf("%-11s %-11s %9s %10s %8s %9s %10ld %12s  %s\n", shape_name[shape], label, "-", "-",
		       "-", "-", ru.ru_maxrss / 1024, "-",
		       WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "stopped after 120 s"
									   : "failed (out of memory?)");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct {
		enum shape shape;
		size_t n;
	} cases[] = {
		{ DUPLICATED, 1000 }, { DUPLICATED, 3000 }, { DUPLICATED, 20000 },
		{ DISTINCT, 1000 },   { DISTINCT, 20000 },  { VALID, 1000 },
		{ VALID, 20000 },     { DUPLICATED, 0 },    { DISTINCT, 0 },
	};

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "usage: bench-webhook\n");
		return 2;
	}
	printf("%-11s %-11s %9s %10s %8s %9s %10s %12s  %s\n", "nodes", "count", "body B", "review ms",
	       "CPU ms", "parse ms", "peak MiB", "answer B", "verdict");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		measure(cases[i].shape, cases[i].n);
	return 0;
}
