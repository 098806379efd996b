/*
 * One collection of the API mirrored in memory: list, then watch from the list's version
 *
 * What client-go's reflector does, for one thread: the list (in pages, streamed item by
 * item) replaces the objects at once, then a watch from the list's resourceVersion applies
 * changes as they come, bookmarks keeping the version fresh. A watch that times out starts
 * again from the last version; one whose version is gone (410, as an HTTP status or an
 * ERROR event) lists again, since events were lost. The objects are kept under a lock so
 * that any thread may take a snapshot.
 *
 * Pacing: a server that ends every watch at once, or answers every one with a 410, must
 * not make this loop at the speed of loopback. Every failure (a watch that could not
 * start, broke off, ended within a second with no change, or forced a list; a list that
 * failed) waits the backoff before the next request, and the backoff starts over only
 * when a watch shows the server works: it delivered a change the mirror took (an event it
 * refuses, or one that repeats what it holds, is none), or stayed open a minute.
 * A list that succeeds does not reset it: "list fine, watch 410" would loop otherwise.
 *
 * A 404 on the list of a collection listed before keeps its objects (an API server
 * restarting serves its CRDs a few seconds after the rest): they stay until a list
 * succeeds, or for ABSENT_GRACE_S, after which the collection is taken as empty.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/reflector.h"
#include "ipam/nv-ipam/api/watch.h"
#include "ipam/nv-ipam/k8s/liststream.h"

#define BACKOFF_FIRST_MS 500u
#define BACKOFF_MAX_MS 16000u
#define LIST_TIMEOUT_MS 60000L
/* A watch ending sooner than this with no change is a failure (client-go's rule). */
#define SHORT_WATCH_MS 1000L
/* A watch open this long (quiet collections get bookmarks only) resets the backoff. */
#define HEALTHY_WATCH_MS 60000L
/*
 * A collection listed before and answering 404 since keeps its objects this long: longer
 * than an API server's restart; a CRD truly deleted took its objects with it (DELETED
 * events came first), so only a reflector that missed those keeps stale ones, this long.
 */
#define ABSENT_GRACE_S 300L
/* Expired continue tokens (410 on a later page) that restart one list from its start. */
#define LIST_RESTARTS_MAX 3
/* A watch that sends nothing for this long past its timeout is dead (no FIN came). */
#define WATCH_IDLE_MARGIN_S 60L
#define KEY_MAX 600

struct entry {
	char *key; /* "namespace/name" */
	struct json_object *obj;
};

struct objset {
	struct entry *v; /* sorted by key */
	size_t n;
	size_t cap;
};

struct api_reflector {
	struct api_reflector_config cfg;
	int stop_fd;
	pthread_mutex_t lock;
	struct objset objs;              /* under lock */
	struct api_reflector_stats stats; /* under lock */
	char *rv;                        /* the last version seen: only the run's thread */
	bool listed;                     /* the objects are a list's (not "not served") */
	int64_t gone_since_ms;           /* CLOCK_MONOTONIC of the first 404 since; 0: none */
	unsigned int backoff_ms;
	unsigned int seed;
};

static void objset_free(struct objset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		json_object_put(s->v[i].obj);
	}
	free(s->v);
	*s = (struct objset){ 0 };
}

/* The index of @key, or where it would go (*@ret_found false). */
static size_t objset_find(const struct objset *s, const char *key, bool *ret_found)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->v[mid].key, key);

		if (c == 0) {
			*ret_found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ret_found = false;
	return lo;
}

/* Takes a reference of @obj. Return: 1 when the set changed, 0 when it held @obj already. */
static int objset_put(struct objset *s, const char *key, struct json_object *obj)
{
	bool found;
	size_t i = objset_find(s, key, &found);
	char *k;

	if (found) {
		int same = json_object_equal(s->v[i].obj, obj);

		json_object_put(s->v[i].obj);
		s->v[i].obj = json_object_get(obj);
		return !same;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	k = strdup(key);
	if (!k)
		return -ENOMEM;
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->v[i] = (struct entry){ .key = k, .obj = json_object_get(obj) };
	s->n++;
	return 1;
}

/* What the owner keeps of @obj: a new reference in *@ret. */
static int trimmed(const struct api_reflector *r, struct json_object *obj, struct json_object **ret)
{
	if (!r->cfg.trim) {
		*ret = json_object_get(obj);
		return 0;
	}
	return r->cfg.trim(r->cfg.ctx, obj, ret);
}

/* Return: whether the set held @key. */
static bool objset_del(struct objset *s, const char *key)
{
	bool found;
	size_t i = objset_find(s, key, &found);

	if (!found)
		return false;
	free(s->v[i].key);
	json_object_put(s->v[i].obj);
	memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
	s->n--;
	return true;
}

int api_reflector_new(const struct api_reflector_config *cfg, int stop_fd,
		      struct api_reflector **ret)
{
	struct api_reflector *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		free(r);
		return -ENOMEM;
	}
	r->cfg = *cfg;
	r->stop_fd = stop_fd;
	r->backoff_ms = BACKOFF_FIRST_MS;
	r->seed = (unsigned int)time(NULL) ^ (unsigned int)getpid() ^ (unsigned int)(uintptr_t)r;
	*ret = r;
	return 0;
}

void api_reflector_free(struct api_reflector *r)
{
	if (!r)
		return;
	objset_free(&r->objs);
	pthread_mutex_destroy(&r->lock);
	free(r->rv);
	free(r);
}

void api_objects_free(struct json_object **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		json_object_put(v[i]);
	free(v);
}

int api_reflector_snapshot(struct api_reflector *r, struct json_object ***ret, size_t *ret_n)
{
	struct json_object **v;

	size_t n = 0;

	/*
	 * Copies: json-c's reference counts are not atomic, so an object must never be
	 * shared between threads; the caller may also change its copies.
	 */
	pthread_mutex_lock(&r->lock);
	v = calloc(r->objs.n + 1, sizeof(*v));
	for (; v && n < r->objs.n; n++)
		if (json_object_deep_copy(r->objs.v[n].obj, &v[n], NULL) < 0)
			break;
	pthread_mutex_unlock(&r->lock);
	if (!v || n < r->objs.n) {
		api_objects_free(v, n);
		return -ENOMEM;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void api_reflector_stats(struct api_reflector *r, struct api_reflector_stats *ret)
{
	pthread_mutex_lock(&r->lock);
	*ret = r->stats;
	pthread_mutex_unlock(&r->lock);
}

static void note(struct api_reflector *r, enum api_reflector_note what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct api_reflector *r, enum api_reflector_note what, const char *fmt, ...)
{
	char msg[1536];
	va_list ap;
	int n;

	if (!r->cfg.note)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A failure waits the backoff next: said, the pacing is read from the log, not timed. */
	if (n >= 0 && (size_t)n < sizeof(msg) &&
	    (what == API_NOTE_LIST_FAILED || what == API_NOTE_EXPIRED ||
	     what == API_NOTE_WATCH_FAILED || what == API_NOTE_BAD_EVENT))
		snprintf(msg + n, sizeof(msg) - (size_t)n, " (next try in %u ms)", r->backoff_ms);
	r->cfg.note(r->cfg.ctx, what, msg);
}

/* Waits @ms or until told to stop; true when told to stop. */
static bool pause_ms(struct api_reflector *r, unsigned int ms)
{
	struct pollfd p = { .fd = r->stop_fd, .events = POLLIN };

	if (r->stop_fd < 0) {
		struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		return false;
	}
	return poll(&p, 1, (int)ms) > 0;
}

static bool backoff(struct api_reflector *r)
{
	unsigned int ms = r->backoff_ms;

	r->backoff_ms = ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : ms * 2;
	return pause_ms(r, ms);
}

static void set_rv(struct api_reflector *r, const char *rv)
{
	char *copy = strdup(rv);

	/* Out of memory: the old version stays, and a later 410 lists again. */
	if (copy) {
		free(r->rv);
		r->rv = copy;
	}
}

/* ---- list ---- */

struct list_ctx {
	const struct api_reflector *r;
	struct objset *fresh;
	struct liststream *ls;
	struct cni_err *err;
	int feed_error;
};

static int list_item(void *ctx, struct json_object *item, size_t index, struct cni_err *err)
{
	struct list_ctx *l = ctx;
	char key[KEY_MAX];
	struct json_object *kept;
	int rc;

	if (api_object_key(item, key, sizeof(key)) < 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EBADMSG, "item %zu has no metadata.name", index);
	rc = trimmed(l->r, item, &kept);
	if (rc == 0) {
		rc = objset_put(l->fresh, key, kept);
		json_object_put(kept);
	}
	if (rc < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

static void parse_lock(const struct api_reflector *r)
{
	if (r->cfg.parse_lock)
		pthread_mutex_lock(r->cfg.parse_lock);
}

static void parse_unlock(const struct api_reflector *r)
{
	if (r->cfg.parse_lock)
		pthread_mutex_unlock(r->cfg.parse_lock);
}

static int list_data(void *ctx, const char *data, size_t len)
{
	struct list_ctx *l = ctx;
	int rc;

	/* Items are parsed, trimmed and freed within the feed: each tree under the lock. */
	parse_lock(l->r);
	rc = liststream_feed(l->ls, data, len, l->err);
	parse_unlock(l->r);
	return rc;
}

static char *join_path(const struct api_reflector *r, const char *params)
{
	char *p;

	if (asprintf(&p, "%s?%s%s%s", r->cfg.path, params, r->cfg.query ? "&" : "",
		     r->cfg.query ? r->cfg.query : "") < 0)
		return NULL;
	return p;
}

/* One page; *@ret_cont is its continue token ("" at the end). 1: not served. */
static int list_page(struct api_reflector *r, struct api_client *c, const char *cont,
		     struct objset *fresh, char **ret_rv, char **ret_cont, struct cni_err *err)
{
	_cleanup_free_ char *params = NULL, *path = NULL, *esc = NULL;
	struct list_ctx l = { .r = r, .fresh = fresh, .err = err };
	struct api_response resp = { 0 };
	struct api_request req = { .timeout_ms = LIST_TIMEOUT_MS, .on_data = list_data, .ctx = &l };
	int rc;

	if (cont && *cont && !(esc = api_escape(cont)))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (asprintf(&params, "limit=%ld%s%s", r->cfg.page_size > 0 ? r->cfg.page_size : 500L,
		     esc ? "&continue=" : "", esc ? esc : "") < 0) {
		params = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	path = join_path(r, params);
	if (!path || liststream_new("list", list_item, &l, &l.ls) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (r->cfg.skim)
		liststream_set_skim(l.ls, r->cfg.skim, r->cfg.ctx);
	req.path = path;
	rc = api_call(c, &req, &resp, err);
	if (rc >= 0 && resp.http >= 200 && resp.http < 300) {
		parse_lock(r);
		rc = liststream_end(l.ls, err);
		parse_unlock(r);
		if (rc >= 0) {
			*ret_rv = strdup(liststream_string(l.ls, "metadata.resourceVersion"));
			*ret_cont = strdup(liststream_string(l.ls, "metadata.continue"));
			if (!*ret_rv || !*ret_cont) {
				free(*ret_rv);
				free(*ret_cont);
				rc = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			}
		}
	} else if (rc >= 0) {
		struct api_status st;

		api_status_from(resp.http, resp.body, resp.len, &st);
		rc = resp.http == 404 ? 1
		   : cni_err_set(err, CNI_ERR_IO, api_status_errno(resp.http), "%ld %s%s%s", st.http,
				 st.reason, st.message[0] ? ": " : "", st.message);
	}
	api_response_free(&resp);
	liststream_free(l.ls);
	return rc;
}

/*
 * A 404 on the list: true when the objects listed before are kept (a failure, noted),
 * false when the collection is to be taken as empty.
 */
static bool keep_on_404(struct api_reflector *r)
{
	int64_t now = clock_mono_ms();

	if (!r->listed)
		return false;
	if (!r->gone_since_ms)
		r->gone_since_ms = now;
	if (now - r->gone_since_ms >= ABSENT_GRACE_S * 1000)
		return false;
	note(r, API_NOTE_LIST_FAILED,
	     "listing %s: 404 (not served): keeping the %zu listed before until a list succeeds "
	     "(for %ld s at most)", r->cfg.resource, r->objs.n, ABSENT_GRACE_S);
	return true;
}

/* 0: listed, 1: not served, negative: failed (noted). */
static int do_list(struct api_reflector *r, struct api_client *c)
{
	struct objset fresh = { 0 }, old;
	_cleanup_free_ char *rv = NULL, *cont = NULL;
	struct cni_err err = { 0 };
	int restarts = 0;
	int rc;

	for (;;) {
		char *page_rv = NULL, *next = NULL;

		rc = list_page(r, c, cont, &fresh, &page_rv, &next, &err);
		if (rc == -ESTALE && cont && restarts < LIST_RESTARTS_MAX) {
			/* The continue token expired between pages: the list starts over. */
			objset_free(&fresh);
			free(cont);
			cont = NULL;
			restarts++;
			err = (struct cni_err){ 0 };
			continue;
		}
		if (rc != 0)
			break;
		free(rv);
		rv = page_rv;
		free(cont);
		cont = next;
		if (!*cont)
			break;
	}
	if (rc == 1)
		objset_free(&fresh);
	if (rc < 0) {
		objset_free(&fresh);
		if (rc != -ECANCELED)
			note(r, API_NOTE_LIST_FAILED, "listing %s: %s", r->cfg.resource, err.msg);
		return rc;
	}
	if (rc == 1 && keep_on_404(r))
		return -ENOENT;
	pthread_mutex_lock(&r->lock);
	old = r->objs;
	r->objs = fresh;
	r->stats.synced = true;
	r->stats.absent = rc == 1;
	r->stats.lists += rc == 0;
	r->stats.last_list = time(NULL);
	pthread_mutex_unlock(&r->lock);
	objset_free(&old);
	free(r->rv);
	r->rv = rc == 0 ? TAKE_PTR(rv) : NULL;
	r->listed = rc == 0;
	r->gone_since_ms = 0;
	if (rc == 1)
		note(r, API_NOTE_ABSENT, "%s are not served (is the CRD installed?): taken as none",
		     r->cfg.resource);
	else
		note(r, API_NOTE_LISTED, "listed %zu %s at resourceVersion %s", r->objs.n,
		     r->cfg.resource, r->rv);
	if (r->cfg.changed)
		r->cfg.changed(r->cfg.ctx);
	return rc;
}

/* ---- watch ---- */

struct watch_ctx {
	struct api_reflector *r;
	struct api_lines lines;
	bool changed;
	unsigned long changes; /* ADDED, MODIFIED and DELETED applied (bookmarks are none) */
	char why[1024]; /* for an error the stream gave */
};

static int watch_line(void *ctx, const char *line, size_t len)
{
	struct watch_ctx *w = ctx;
	struct api_reflector *r = w->r;
	struct api_event ev = { 0 };
	struct cni_err err = { 0 };
	_cleanup_free_ char *cut = NULL;
	struct json_object *kept;
	char key[KEY_MAX];
	size_t cut_len = 0;
	int rc = 0;

	if (r->cfg.skim) {
		rc = r->cfg.skim(r->cfg.ctx, line, len, &cut, &cut_len);
		if (rc < 0) {
			snprintf(w->why, sizeof(w->why), "out of memory");
			return rc;
		}
		if (rc > 0) {
			line = cut;
			len = cut_len;
		}
		rc = 0;
	}
	if (api_event_parse(line, len, &ev, &err) < 0) {
		snprintf(w->why, sizeof(w->why), "%s", err.msg);
		return -EBADMSG;
	}
	switch (ev.type) {
	case API_EVENT_ERROR: {
		struct api_status st;
		const char *text = json_object_to_json_string_ext(ev.object, JSON_C_TO_STRING_PLAIN);

		api_status_from(ev.code, text, text ? strlen(text) : 0, &st);
		snprintf(w->why, sizeof(w->why), "%ld %s%s%s", st.http, st.reason,
			 st.message[0] ? ": " : "", st.message);
		rc = ev.code == 410 ? -ESTALE : -EPROTO;
		break;
	}
	case API_EVENT_BOOKMARK:
		set_rv(r, ev.resource_version);
		break;
	case API_EVENT_ADDED:
	case API_EVENT_MODIFIED:
	case API_EVENT_DELETED:
		if (snprintf(key, sizeof(key), "%s/%s", ev.namespace, ev.name) >= (int)sizeof(key)) {
			snprintf(w->why, sizeof(w->why), "an object's name is too long");
			rc = -EBADMSG;
			break;
		}
		kept = NULL;
		if (ev.type != API_EVENT_DELETED)
			rc = trimmed(r, ev.object, &kept);
		pthread_mutex_lock(&r->lock);
		if (ev.type == API_EVENT_DELETED)
			rc = objset_del(&r->objs, key);
		else if (rc == 0)
			rc = objset_put(&r->objs, key, kept);
		r->stats.events++;
		pthread_mutex_unlock(&r->lock);
		json_object_put(kept);
		if (rc < 0) {
			snprintf(w->why, sizeof(w->why), "out of memory");
			break;
		}
		set_rv(r, ev.resource_version);
		/*
		 * A change only when the mirror changed: an event that repeats what it holds
		 * (a server replaying one and ending the watch) shows nothing of the server's
		 * health, and must not start the backoff over.
		 */
		if (rc > 0) {
			w->changed = true;
			w->changes++;
		}
		rc = 0;
		break;
	}
	api_event_clear(&ev);
	return rc;
}

static int watch_data(void *ctx, const char *data, size_t len)
{
	struct watch_ctx *w = ctx;
	int rc;

	/* Each event is parsed, trimmed and freed within watch_line(): its tree under the lock. */
	parse_lock(w->r);
	rc = api_lines_feed(&w->lines, data, len, watch_line, w);
	parse_unlock(w->r);

	/* A batch that arrived together is one change for the owner. */
	if (w->changed && w->r->cfg.changed) {
		w->changed = false;
		w->r->cfg.changed(w->r->cfg.ctx);
	}
	if (rc == -E2BIG)
		snprintf(w->why, sizeof(w->why), "an event longer than %u bytes", API_EVENT_MAX_BYTES);
	return rc;
}

/*
 * 0: ended at its timeout; -ESTALE: list again; -ECANCELED: stop; else failed (noted).
 * Resets the backoff when the watch showed the server works.
 */
static int do_watch(struct api_reflector *r, struct api_client *c)
{
	long timeout = r->cfg.watch_timeout_s > 0 ? r->cfg.watch_timeout_s
						   : 300 + (long)(rand_r(&r->seed) % 300);
	_cleanup_free_ char *params = NULL, *path = NULL, *rv = api_escape(r->rv ? r->rv : "");
	struct watch_ctx w = { .r = r, .lines = { .max = API_EVENT_MAX_BYTES } };
	struct api_request req = { .idle_timeout_s = timeout + WATCH_IDLE_MARGIN_S,
				   .on_data = watch_data, .ctx = &w };
	struct api_response resp = { 0 };
	struct cni_err err = { 0 };
	int64_t started, lasted;
	int rc;

	if (!rv || asprintf(&params, "watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld",
			    rv, timeout) < 0 || !(path = join_path(r, params))) {
		note(r, API_NOTE_WATCH_FAILED, "watching %s: out of memory", r->cfg.resource);
		return -ENOMEM;
	}
	req.path = path;
	started = clock_mono_ms();
	rc = api_call(c, &req, &resp, &err);
	lasted = clock_mono_ms() - started;
	if (rc >= 0 && resp.http >= 200 && resp.http < 300 && api_lines_pending(&w.lines)) {
		snprintf(w.why, sizeof(w.why), "the stream ended in the middle of an event");
		rc = -ECONNRESET;
	} else if (rc >= 0 && (resp.http < 200 || resp.http >= 300)) {
		struct api_status st;

		api_status_from(resp.http, resp.body, resp.len, &st);
		snprintf(w.why, sizeof(w.why), "%ld %s%s%s", st.http, st.reason, st.message[0] ? ": " : "",
			 st.message);
		rc = resp.http == 410 ? -ESTALE : resp.http == 404 ? -ENOENT : api_status_errno(resp.http);
	} else if (rc >= 0 && lasted < SHORT_WATCH_MS && w.changes == 0) {
		/*
		 * Ended at once with nothing, or a bookmark only: the server (or a proxy) is not
		 * watching. client-go counts a bookmark as an event here; one that answers every
		 * watch with a bookmark and its end would then be watched again at full speed.
		 */
		snprintf(w.why, sizeof(w.why), "the watch ended after %lld ms with no change",
			 (long long)lasted);
		rc = -EPIPE;
	} else if (rc < 0 && !w.why[0]) {
		snprintf(w.why, sizeof(w.why), "%s", err.msg);
	}
	api_response_free(&resp);
	api_lines_free(&w.lines);
	if (rc == -ECANCELED)
		return rc;
	if (w.changes > 0 || lasted >= HEALTHY_WATCH_MS)
		r->backoff_ms = BACKOFF_FIRST_MS;
	if (rc == 0)
		return rc;
	if (rc == -ESTALE || rc == -EBADMSG) {
		pthread_mutex_lock(&r->lock);
		r->stats.expired += rc == -ESTALE;
		pthread_mutex_unlock(&r->lock);
		note(r, rc == -ESTALE ? API_NOTE_EXPIRED : API_NOTE_BAD_EVENT,
		     "watching %s from resourceVersion %s: %s: listing again", r->cfg.resource,
		     r->rv ? r->rv : "", w.why);
		return -ESTALE;
	}
	pthread_mutex_lock(&r->lock);
	r->stats.restarts++;
	pthread_mutex_unlock(&r->lock);
	note(r, API_NOTE_WATCH_FAILED, "watching %s: %s", r->cfg.resource, w.why);
	/* The collection went away (its CRD was deleted, or is not served yet): a list says so. */
	return rc == -ENOENT ? -ESTALE : rc;
}

void api_reflector_run(struct api_reflector *r, struct api_client *c)
{
	bool need_list = true;

	for (;;) {
		int rc;

		if (pause_ms(r, 0))
			return;
		if (need_list) {
			rc = do_list(r, c);
			if (rc == -ECANCELED)
				return;
			if (rc < 0) {
				if (backoff(r))
					return;
				continue;
			}
			if (rc == 1) {
				if (pause_ms(r, (unsigned int)(r->cfg.absent_retry_s > 0 ? r->cfg.absent_retry_s
											 : 30) * 1000u))
					return;
				continue;
			}
			need_list = false;
		}
		rc = do_watch(r, c);
		if (rc == -ECANCELED)
			return;
		need_list = rc == -ESTALE;
		/* A relist too: a server that answers every watch with a 410 is not listed in a loop. */
		if (rc < 0 && backoff(r))
			return;
	}
}
