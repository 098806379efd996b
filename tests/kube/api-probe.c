/*
 * api-probe: drives the API client (ipam/nv-ipam/api/) from the kube suite's scripts
 *
 *   api-probe [--kubeconfig FILE | --in-cluster DIR] get PATH
 *   api-probe ... send METHOD PATH FILE [CONTENT-TYPE]    (PUT, PATCH, POST, DELETE)
 *   api-probe ... reflect PATH [QUERY]                    (until SIGTERM)
 *
 * get and send print the object answered, or "error <errno name> <http> <reason>: <msg>"
 * and exit 1. reflect prints a line per note ("note <what>: <msg>") and, at every change,
 * "objects <n>: ns/name=resourceVersion ..." in key order, until SIGTERM or SIGINT
 * ("stopped"). PROBE_WATCH_TIMEOUT sets its watches' timeoutSeconds.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "common/util/file.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/conn.h"
#include "ipam/nv-ipam/api/reflector.h"

static const char *errno_name(int e)
{
	switch (-e) {
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case ESTALE: return "ESTALE";
	case EAGAIN: return "EAGAIN";
	case EPROTO: return "EPROTO";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECANCELED: return "ECANCELED";
	case ETIMEDOUT: return "ETIMEDOUT";
	default: return "E?";
	}
}

static int show(int r, struct json_object *o, const struct api_status *st, const struct cni_err *err)
{
	if (r < 0) {
		printf("error %s %ld %s: %s\n", errno_name(r), st->http, st->reason, err->msg);
		return 1;
	}
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

static const char *const note_names[] = {
	[API_NOTE_LISTED] = "listed",
	[API_NOTE_ABSENT] = "absent",
	[API_NOTE_LIST_FAILED] = "list-failed",
	[API_NOTE_EXPIRED] = "expired",
	[API_NOTE_WATCH_FAILED] = "watch-failed",
	[API_NOTE_BAD_EVENT] = "bad-event",
};

struct probe {
	struct api_reflector *r;
	pthread_mutex_t out;
};

static void on_note(void *ctx, enum api_reflector_note what, const char *msg)
{
	struct probe *p = ctx;

	pthread_mutex_lock(&p->out);
	printf("note %s: %s\n", note_names[what], msg);
	fflush(stdout);
	pthread_mutex_unlock(&p->out);
}

static void on_changed(void *ctx)
{
	struct probe *p = ctx;
	struct json_object **v = NULL;
	size_t n = 0;

	if (api_reflector_snapshot(p->r, &v, &n) < 0)
		return;
	pthread_mutex_lock(&p->out);
	printf("objects %zu:", n);
	for (size_t i = 0; i < n; i++) {
		struct json_object *m = json_object_object_get(v[i], "metadata");

		printf(" %s/%s=%s", json_object_get_string(json_object_object_get(m, "namespace")),
		       json_object_get_string(json_object_object_get(m, "name")),
		       json_object_get_string(json_object_object_get(m, "resourceVersion")));
	}
	printf("\n");
	fflush(stdout);
	pthread_mutex_unlock(&p->out);
	api_objects_free(v, n);
}

struct run_args {
	struct api_reflector *r;
	struct api_client *c;
};

static void *run_thread(void *arg)
{
	struct run_args *a = arg;

	api_reflector_run(a->r, a->c);
	return NULL;
}

/* Waits for SIGTERM or SIGINT, then writes @stop_fd. */
static void wait_end(int stop_fd, const sigset_t *sigs)
{
	int sig;

	while (sigwait(sigs, &sig) != 0)
		;
	(void)!write(stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t));
}

int main(int argc, char **argv)
{
	struct api_conn conn = { 0 };
	struct api_client *c = NULL;
	struct cni_err err = { 0 };
	struct api_status st = { 0 };
	int stop_fd, i = 1, rc = 2;
	sigset_t sigs;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (argc >= 3 && strcmp(argv[1], "--kubeconfig") == 0) {
		if (api_conn_kubeconfig(argv[2], &conn, &err) < 0)
			goto conn_failed;
		i = 3;
	} else if (argc >= 3 && strcmp(argv[1], "--in-cluster") == 0) {
		if (api_conn_in_cluster(argv[2], &conn, &err) < 0)
			goto conn_failed;
		i = 3;
	} else if (api_conn_load(NULL, &conn, &err) < 0) {
		goto conn_failed;
	}
	stop_fd = eventfd(0, EFD_CLOEXEC);
	if (stop_fd < 0 || api_init() < 0 || api_client_new(&conn, "api-probe", stop_fd, &c) < 0)
		return 2;
	if (i + 1 < argc && strcmp(argv[i], "get") == 0) {
		struct json_object *o = NULL;
		int r = api_json(c, NULL, argv[i + 1], NULL, NULL, &o, &st, &err);

		rc = show(r, o, &st, &err);
	} else if (i + 3 < argc && strcmp(argv[i], "send") == 0) {
		struct json_object *body = json_object_from_file(argv[i + 3]), *o = NULL;
		int r;

		if (!body)
			return 2;
		r = api_json(c, argv[i + 1], argv[i + 2], body, i + 4 < argc ? argv[i + 4] : NULL, &o, &st,
			     &err);
		rc = show(r, o, &st, &err);
		json_object_put(body);
	} else if (i + 1 < argc && strcmp(argv[i], "reflect") == 0) {
		struct probe p = { .out = PTHREAD_MUTEX_INITIALIZER };
		struct api_reflector_config cfg = { .resource = argv[i + 1], .path = argv[i + 1],
						    .query = i + 2 < argc ? argv[i + 2] : NULL,
						    .watch_timeout_s = getenv("PROBE_WATCH_TIMEOUT")
									   ? atol(getenv("PROBE_WATCH_TIMEOUT")) : 0,
						    .absent_retry_s = 2,
						    .changed = on_changed, .note = on_note, .ctx = &p };
		struct run_args a = { .c = c };
		pthread_t t;

		if (api_reflector_new(&cfg, stop_fd, &p.r) < 0)
			return 2;
		a.r = p.r;
		if (pthread_create(&t, NULL, run_thread, &a) != 0)
			return 2;
		wait_end(stop_fd, &sigs);
		pthread_join(t, NULL);
		api_reflector_free(p.r);
		printf("stopped\n");
		rc = 0;
	} else {
		fprintf(stderr, "usage: see the comment at the top of tests/kube/api-probe.c\n");
	}
	api_client_free(c);
	api_conn_free(&conn);
	api_cleanup();
	return rc;
conn_failed:
	printf("error connection: %s\n", err.msg);
	return 1;
}
