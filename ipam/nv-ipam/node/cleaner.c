/*
 * ipam-node's cleaner: the addresses of pods that are gone from the API are released
 *
 * Multus never sends CNI GC to a secondary network, and a DEL can be lost (a node
 * rebooted, a pod force-deleted while its kubelet was down): without this, such an
 * address would stay held. Every --stale-ip-check-interval the node's pods are listed
 * (field selector spec.nodeName, a page at a time, read as a stream) and the listing goes
 * to gc_run(), the pass nv-ipam-tool gc runs: an allocation whose pod is not listed, or is
 * listed with another UID, is released on its (count-before-release + 1)-th consecutive
 * miss, as the reference's cleaner does; one made after the listing started is not
 * counted. A listing that fails releases nothing and is tried again sooner.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/gc/run.h"
#include "ipam/nv-ipam/k8s/liststream.h"
#include "ipam/nv-ipam/k8s/pods.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/node.h"

/* After a failed pass: sooner than the interval, never in a loop. */
#define RETRY_MS 5000L
#define PAGE_SIZE 500
/* Expired continue tokens (410 on a later page) that restart one listing from its start. */
#define LIST_RESTARTS_MAX 3
#define LIST_TIMEOUT_MS 60000L
/*
 * The store lock is waited for at most this long: a stop must not wait behind it (the
 * lock is held for milliseconds by an ADD; a pass that cannot have it is tried again).
 */
#define STORE_LOCK_TIMEOUT_MS 1000u

struct page {
	struct liststream *ls;
	struct cni_err *err;
};

static int page_data(void *ctx, const char *data, size_t len)
{
	struct page *p = ctx;

	return liststream_feed(p->ls, data, len, p->err);
}

/* This node's pods, every page of them. */
static int list_pods(struct node *n, struct api_client *c, struct pods *ret, struct cni_err *err)
{
	_cleanup_free_ char *selector = NULL, *esc = NULL, *cont = NULL;
	struct pods pods = { 0 };
	int restarts = 0;
	int r = 0;

	if (asprintf(&selector, "spec.nodeName=%s", n->flags->node_name) < 0) {
		selector = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	esc = api_escape(selector);
	if (!esc)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (;;) {
		_cleanup_free_ char *path = NULL, *cesc = cont ? api_escape(cont) : NULL, *following = NULL;
		struct page pg = { .err = err };
		struct api_request req = { .timeout_ms = LIST_TIMEOUT_MS, .on_data = page_data,
					   .ctx = &pg };
		struct api_response resp = { 0 };
		const char *next;

		if ((cont && !cesc) ||
		    asprintf(&path, "/api/v1/pods?fieldSelector=%s&limit=%d%s%s", esc, PAGE_SIZE,
			     cesc ? "&continue=" : "", cesc ? cesc : "") < 0) {
			path = NULL;
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			break;
		}
		if (pods_reader_new("the pod listing", &pods, &pg.ls) < 0) {
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			break;
		}
		req.path = path;
		r = api_call(c, &req, &resp, err);
		if (r >= 0 && (resp.http < 200 || resp.http >= 300)) {
			struct api_status st;

			api_status_from(resp.http, resp.body, resp.len, &st);
			r = cni_err_set(err, CNI_ERR_IO, api_status_errno(resp.http),
					"GET /api/v1/pods: %ld %s%s%s", st.http, st.reason,
					st.message[0] ? ": " : "", st.message);
		}
		api_response_free(&resp);
		next = r >= 0 ? liststream_string(pg.ls, "metadata.continue") : "";
		if (*next && !(following = strdup(next)))
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		if (r >= 0)
			r = pods_reader_end(pg.ls, "the pod listing", err);
		else
			pods_reader_free(pg.ls);
		if (r == -ESTALE && cont && restarts < LIST_RESTARTS_MAX) {
			/*
			 * The continue token expired (the pages took longer than the API server
			 * keeps a list's version, 5 minutes by default): the pods of the pages
			 * read are dropped and the listing starts over.
			 */
			klog_info(0, "cleaner: the pod listing's continue token expired, listing again from the start",
				  "detail", err->msg, NULL);
			pods_free(&pods);
			free(cont);
			cont = NULL;
			restarts++;
			*err = (struct cni_err){ 0 };
			continue;
		}
		free(cont);
		cont = TAKE_PTR(following);
		if (r < 0 || !cont)
			break;
	}
	if (r < 0) {
		pods_free(&pods);
		return r;
	}
	pods_sort(&pods);
	*ret = pods;
	return 0;
}

/* Each line of @text as its own log line: @v for "missed", 0 for the rest. */
static void log_report(const char *text)
{
	_cleanup_free_ char *copy = text ? strdup(text) : NULL;

	if (!copy)
		return;
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "missed ", 7) == 0)
			klog_info(1, "cleaner: an address's pod is gone", "detail", line, NULL);
		else
			klog_info(0, "cleaner", "detail", line, NULL);
	}
}

static int pass(struct node *n, struct api_client *c, char *last_summary, size_t len)
{
	const struct node_flags *f = n->flags;
	struct gc_params p = { .store = f->store_file, .pool_file = n->pool_file,
			       .lock_timeout_ms = STORE_LOCK_TIMEOUT_MS,
			       .misses = (unsigned long)f->stale_check_count + 1,
			       .node = f->node_name };
	struct gc_result res = { 0 };
	struct cni_err err = { 0 };
	struct pods pods = { 0 };
	char summary[256], list_ms[24], n_pods[24];
	int64_t started;
	int r;

	r = node_store_lock(n, &err);
	if (r < 0) {
		klog_error(err.msg, "cannot hold the store lock", "store", f->store_file, NULL);
		return r;
	}
	/* Taken before the listing: an allocation made after it may be missing from it. */
	p.listed_at = time(NULL);
	started = clock_mono_ms();
	r = list_pods(n, c, &pods, &err);
	/* What the listing costs the API server and this node: a figure to watch at scale. */
	snprintf(list_ms, sizeof(list_ms), "%lld", (long long)(clock_mono_ms() - started));
	if (r == -ECANCELED)
		return r;
	if (r < 0) {
		klog_error(err.msg, "cannot list this node's pods: nothing released or counted", NULL);
		return r;
	}
	snprintf(n_pods, sizeof(n_pods), "%zu", pods.n);
	r = gc_run(&p, &pods, &res, &err);
	pods_free(&pods);
	if (r < 0) {
		klog_error(err.msg, "clean pass failed: nothing released", NULL);
		return r;
	}
	for (char *save = NULL, *line = res.warnings ? strtok_r(res.warnings, "\n", &save) : NULL;
	     line; line = strtok_r(NULL, "\n", &save))
		klog_warning("cleaner", "detail", line, NULL);
	log_report(res.report);
	snprintf(summary, sizeof(summary), "%zu listed, %zu missed, %zu released, %zu skipped, %zu newer",
		 res.tally.seen, res.tally.missed, res.tally.released, res.tally.no_pod, res.tally.fresh);
	/* The same summary every minute says nothing new: at -v 1 only. */
	klog_info(strcmp(summary, last_summary) == 0 ? 1 : 0, "clean pass", "allocations", summary,
		  "pods", n_pods, "listMs", list_ms, NULL);
	snprintf(last_summary, len, "%s", summary);
	(void)metrics_set_usage(&n->metrics, &res);
	gc_result_free(&res);
	return 0;
}

static bool stopped_in(int stop_fd, long ms)
{
	struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };

	if (ms < 0)
		ms = 0;
	return poll(&pfd, 1, ms > 0x7fffffff ? 0x7fffffff : (int)ms) > 0;
}

void node_cleaner_run(struct node *n, void *client)
{
	const long interval = n->flags->stale_check_interval_ms;
	struct api_client *c = client;
	char last_summary[256] = "", text[32];
	long tick;

	/* The pool file first: a pass drops the records of pools without a block. */
	while (!node_pools_ready(n))
		if (stopped_in(n->stop_fd, 200))
			return;
	snprintf(text, sizeof(text), "%ld", interval);
	klog_info(0, "cleaner started", "intervalMs", text, NULL);
	/*
	 * Passes keep to a fixed beat: a failed one is tried again a few seconds later, and
	 * the next comes at its usual time, so that N misses take N intervals however many
	 * passes failed in between (an API server restarting, say).
	 */
	tick = clock_mono_ms();
	for (;;) {
		int r = pass(n, c, last_summary, sizeof(last_summary));
		long wait;

		if (r == -ECANCELED)
			return;
		pthread_mutex_lock(&n->metrics.lock);
		if (r < 0) {
			n->metrics.clean_failures++;
		} else {
			n->metrics.clean_runs++;
			n->metrics.last_clean = time(NULL);
		}
		pthread_mutex_unlock(&n->metrics.lock);
		if (r < 0) {
			wait = interval < RETRY_MS ? interval : RETRY_MS;
		} else {
			tick += interval;
			while (tick <= clock_mono_ms())
				tick += interval;
			wait = tick - clock_mono_ms();
		}
		if (stopped_in(n->stop_fd, wait))
			return;
	}
}
