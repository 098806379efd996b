/*
 * Events on the pools, as client-go's recorder posts them: repeats counted, a burst limited
 *
 * The reference's controllers record a Warning per node left without a block and per
 * invalid spec, at every reconcile; client-go's correlator turns a repeat into a count on
 * the first Event and its spam filter holds back an object's events past a burst. The same
 * two rules here keep a pool that cannot place a thousand nodes from writing a thousand
 * Events at each change.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "common/util/rfc3339.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/controller/events.h"
#include "ipam/nv-ipam/controller/request.h"
#include "ipam/nv-ipam/k8s/k8s.h"

/* client-go's: repeats within ten minutes are counted; 25 per object, then one per 5 min. */
#define REPEAT_WINDOW_MS (10 * 60 * 1000)
#define BURST 25
#define REFILL_MS (5 * 60 * 1000)
/* What is remembered, oldest forgotten first. */
#define MAX_SEEN 1024
#define MAX_BUCKETS 1024
#define REQUEST_TIMEOUT_MS 10000

struct seen {
	char *key;        /* object + reason + message */
	char *name;       /* the Event's name */
	char *ns;
	long count;
	char first[RFC3339_STRLEN];
	int64_t last_ms;
};

struct bucket {
	char *object;     /* kind/namespace/name */
	double tokens;
	int64_t last_ms;
};

struct events {
	char identity[129]; /* reportingInstance: at most 128 characters */
	struct seen seen[MAX_SEEN];
	size_t n_seen;
	struct bucket buckets[MAX_BUCKETS];
	size_t n_buckets;
};

int events_new(const char *identity, struct events **ret)
{
	struct events *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return -ENOMEM;
	snprintf(ev->identity, sizeof(ev->identity), "%s", identity);
	*ret = ev;
	return 0;
}

static void seen_clear(struct seen *s)
{
	free(s->key);
	free(s->name);
	free(s->ns);
	*s = (struct seen){ 0 };
}

void events_free(struct events *ev)
{
	if (!ev)
		return;
	for (size_t i = 0; i < ev->n_seen; i++)
		seen_clear(&ev->seen[i]);
	for (size_t i = 0; i < ev->n_buckets; i++)
		free(ev->buckets[i].object);
	free(ev);
}

/* Takes a token of @object's bucket; false when it is empty. */
static bool take_token(struct events *ev, const char *object, int64_t now)
{
	struct bucket *b = NULL;

	for (size_t i = 0; i < ev->n_buckets && !b; i++)
		if (strcmp(ev->buckets[i].object, object) == 0)
			b = &ev->buckets[i];
	if (!b) {
		char *copy = strdup(object);
		size_t at = ev->n_buckets;

		if (!copy)
			return true; /* out of memory: no limit rather than no event */
		if (at == MAX_BUCKETS) {
			/* The bucket touched longest ago goes. */
			at = 0;
			for (size_t i = 1; i < ev->n_buckets; i++)
				if (ev->buckets[i].last_ms < ev->buckets[at].last_ms)
					at = i;
			free(ev->buckets[at].object);
		} else {
			ev->n_buckets++;
		}
		b = &ev->buckets[at];
		*b = (struct bucket){ .object = copy, .tokens = BURST, .last_ms = now };
	}
	b->tokens += (double)(now - b->last_ms) / REFILL_MS;
	if (b->tokens > BURST)
		b->tokens = BURST;
	b->last_ms = now;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

static struct seen *seen_find(struct events *ev, const char *key, int64_t now)
{
	for (size_t i = 0; i < ev->n_seen; i++)
		if (strcmp(ev->seen[i].key, key) == 0)
			return now - ev->seen[i].last_ms < REPEAT_WINDOW_MS ? &ev->seen[i] : NULL;
	return NULL;
}

static void seen_add(struct events *ev, const char *key, const char *name, const char *ns,
		     const char *first, int64_t now)
{
	struct seen s = { .key = strdup(key), .name = strdup(name), .ns = strdup(ns), .count = 1,
			  .last_ms = now };
	size_t at = ev->n_seen;

	if (!s.key || !s.name || !s.ns) {
		seen_clear(&s);
		return;
	}
	snprintf(s.first, sizeof(s.first), "%s", first);
	for (size_t i = 0; i < ev->n_seen; i++)
		if (strcmp(ev->seen[i].key, key) == 0)
			at = i;
	if (at == MAX_SEEN) {
		at = 0;
		for (size_t i = 1; i < ev->n_seen; i++)
			if (ev->seen[i].last_ms < ev->seen[at].last_ms)
				at = i;
	}
	if (at < ev->n_seen)
		seen_clear(&ev->seen[at]);
	else
		ev->n_seen++;
	ev->seen[at] = s;
}

static int call(struct api_client *c, const char *method, const char *path, struct json_object *body,
		const char *content_type, struct api_status *st, struct cni_err *err)
{
	return request_json(c, method, path, body, content_type, REQUEST_TIMEOUT_MS, NULL, st, err);
}

static int add_str(struct json_object *o, const char *key, const char *s)
{
	return k8s_json_add_str(o, key, s ? s : "");
}

/* The Event object for a first occurrence. */
static int event_json(const struct events *ev, struct json_object *obj, const char *name,
		      const char *ns, const char *component, const char *type, const char *reason,
		      const char *message, const char *now, struct json_object **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	struct json_object *meta = json_object_new_object(), *inv = json_object_new_object();
	struct json_object *src = json_object_new_object();
	const char *api_version = NULL;
	struct cni_err e = { 0 };
	int r;

	if (!o || !meta || !inv || !src) {
		json_object_put(meta);
		json_object_put(inv);
		json_object_put(src);
		return -ENOMEM;
	}
	(void)cjson_member_str(obj, "apiVersion", &api_version, &e);
	r = k8s_json_add(o, "metadata", meta);
	if (r) {
		json_object_put(inv);
		json_object_put(src);
		return r;
	}
	r = k8s_json_add(o, "involvedObject", inv);
	if (r) {
		json_object_put(src);
		return r;
	}
	r = k8s_json_add(o, "source", src);
	r = r ? r : add_str(o, "apiVersion", "v1");
	r = r ? r : add_str(o, "kind", "Event");
	r = r ? r : add_str(meta, "name", name);
	r = r ? r : add_str(meta, "namespace", ns);
	r = r ? r : add_str(inv, "apiVersion", api_version ? api_version : "nv-ipam.nvidia.com/v1alpha1");
	r = r ? r : add_str(inv, "kind", k8s_object_kind(obj));
	r = r ? r : add_str(inv, "namespace", ns);
	r = r ? r : add_str(inv, "name", k8s_object_name(obj));
	r = r ? r : add_str(inv, "uid", json_object_get_string(k8s_object_member(obj, "metadata", "uid")));
	r = r ? r : add_str(inv, "resourceVersion",
			    json_object_get_string(k8s_object_member(obj, "metadata", "resourceVersion")));
	r = r ? r : add_str(src, "component", component);
	r = r ? r : add_str(o, "reason", reason);
	r = r ? r : add_str(o, "message", message);
	r = r ? r : add_str(o, "type", type);
	r = r ? r : add_str(o, "firstTimestamp", now);
	r = r ? r : add_str(o, "lastTimestamp", now);
	r = r ? r : k8s_json_add(o, "count", json_object_new_int(1));
	r = r ? r : add_str(o, "reportingComponent", component);
	r = r ? r : add_str(o, "reportingInstance", ev->identity);
	if (r)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

int events_emit(struct events *ev, struct api_client *c, struct json_object *obj,
		const char *component, const char *type, const char *reason, const char *message,
		struct cni_err *err)
{
	const char *pool = k8s_object_name(obj), *kind = k8s_object_kind(obj);
	const char *ns = json_object_get_string(k8s_object_member(obj, "metadata", "namespace"));
	const char *uid = json_object_get_string(k8s_object_member(obj, "metadata", "uid"));
	_cleanup_free_ char *object = NULL, *key = NULL, *path = NULL, *esc_ns = NULL;
	int64_t now = clock_mono_ms();
	struct api_status st;
	struct seen *s;
	char stamp[RFC3339_STRLEN];
	int r;

	if (!pool || !ns)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "the object has no name or namespace");
	if (asprintf(&object, "%s/%s/%s/%s", kind, ns, pool, uid ? uid : "") < 0)
		object = NULL;
	if (!object || asprintf(&key, "%s\n%s\n%s\n%s", object, type, reason, message) < 0 ||
	    !(esc_ns = api_escape(ns)))
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	rfc3339_format(time(NULL), stamp);
	s = seen_find(ev, key, now);
	if (s) {
		_cleanup_(json_object_putp) struct json_object *patch = json_object_new_object();
		_cleanup_free_ char *esc_name = api_escape(s->name);

		if (!take_token(ev, object, now))
			return 1;
		if (!patch || !esc_name ||
		    k8s_json_add(patch, "count", json_object_new_int64(s->count + 1)) < 0 ||
		    add_str(patch, "lastTimestamp", stamp) < 0 ||
		    asprintf(&path, "/api/v1/namespaces/%s/events/%s", esc_ns, esc_name) < 0)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		r = call(c, "PATCH", path, patch, "application/merge-patch+json", &st, err);
		if (r == 0) {
			s->count++;
			s->last_ms = now;
			return 0;
		}
		if (r != -ENOENT)
			return r;
		/* The Event expired (an hour's TTL) or was deleted: a new one, whose failure is its own. */
		*err = (struct cni_err){ 0 };
		free(path);
		path = NULL;
	} else if (!take_token(ev, object, now)) {
		return 1;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		_cleanup_(json_object_putp) struct json_object *o = NULL;
		struct timespec ts;
		char name[300];

		clock_gettime(CLOCK_REALTIME, &ts);
		/* client-go's naming: the object's name and the time in nanoseconds, in hex. */
		snprintf(name, sizeof(name), "%.200s.%llx", pool,
			 (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec);
		if (event_json(ev, obj, name, ns, component, type, reason, message, stamp, &o) < 0 ||
		    (!path && asprintf(&path, "/api/v1/namespaces/%s/events", esc_ns) < 0))
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		r = call(c, "POST", path, o, NULL, &st, err);
		if (r == 0) {
			seen_add(ev, key, name, ns, stamp, now);
			return 0;
		}
		if (r != -EEXIST)
			return r;
		/* The name was taken: the next attempt (another nanosecond) reports its own answer. */
		if (attempt == 0)
			*err = (struct cni_err){ 0 };
	}
	return r;
}
