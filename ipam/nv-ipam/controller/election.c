/*
 * Leader election on a coordination.k8s.io Lease, as controller-runtime's managers elect theirs
 *
 * The same lease (name, namespace, record) and the same rules as client-go's leaderelection,
 * so that during a rolling update our replicas and the reference's elect one leader between
 * them. Each round reads the lease; another holder's lease counts as valid for its duration
 * from when this replica saw the record change, on this replica's own monotonic clock; a
 * lease that stopped changing (its holder gone or cut off) or was released is taken over.
 * Writes carry the resourceVersion read, so two candidates never both win a round.
 *
 * Leading ends, for writes, at the renew deadline after the last renewal that succeeded
 * began, even while a renewal hangs: the lease is longer than the deadline, so the leader
 * stops writing before any other replica may take over.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/controller/election.h"
#include "ipam/nv-ipam/controller/request.h"
#include "ipam/nv-ipam/k8s/k8s.h"

/* At the stop the lease is released in at most this long: the pod is being ended. */
#define RELEASE_TIMEOUT_MS 1000L

struct election {
	struct election_config cfg;
	int stop_fd;
	bool stopping;           /* the run's thread only */
	pthread_mutex_t lock;
	bool leading;            /* under lock */
	int64_t valid_until_ms;  /* under lock: monotonic */
	unsigned long transitions, failures; /* under lock */
	struct election_seen seen;           /* the run's thread only */
	unsigned int seed;
};

/* The wall time as a MicroTime: RFC 3339 in UTC with microseconds. */
static void micro_time(char *out, size_t size)
{
	char sec[RFC3339_STRLEN];
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	rfc3339_format(ts.tv_sec, sec);
	/* "YYYY-MM-DDTHH:MM:SSZ": the fraction goes before the Z. */
	snprintf(out, size, "%.19s.%06ldZ", sec, ts.tv_nsec / 1000);
}

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* ---- the record ---- */

int election_lease_parse(struct json_object *lease, struct lease_record *ret)
{
	struct json_object *spec = k8s_object_member(lease, "spec", NULL);
	struct lease_record r = { 0 };
	struct cni_err err = { 0 };
	const char *s = NULL;
	int64_t v = 0;

	if (spec && !json_object_is_type(spec, json_type_object))
		return -EINVAL;
	if (cjson_member_str(spec, "holderIdentity", &s, &err) < 0)
		return -EINVAL;
	copy(r.holder, sizeof(r.holder), s);
	s = NULL;
	if (cjson_member_str(spec, "acquireTime", &s, &err) < 0)
		return -EINVAL;
	copy(r.acquire_time, sizeof(r.acquire_time), s);
	s = NULL;
	if (cjson_member_str(spec, "renewTime", &s, &err) < 0)
		return -EINVAL;
	copy(r.renew_time, sizeof(r.renew_time), s);
	if (cjson_member_int(spec, "leaseDurationSeconds", 0, INT32_MAX, &v, &err) < 0)
		return -EINVAL;
	r.duration_s = (long)v;
	v = 0;
	if (cjson_member_int(spec, "leaseTransitions", 0, INT32_MAX, &v, &err) < 0)
		return -EINVAL;
	r.transitions = (long)v;
	s = NULL;
	if (cjson_member_path_str(lease, "metadata.resourceVersion", &s, &err) < 0)
		return -EINVAL;
	copy(r.resource_version, sizeof(r.resource_version), s);
	*ret = r;
	return 0;
}

int election_lease_json(const struct lease_record *rec, const char *ns, const char *name,
			struct json_object **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	struct json_object *meta = json_object_new_object(), *spec = json_object_new_object();
	int r;

	if (!o || !meta || !spec) {
		json_object_put(meta);
		json_object_put(spec);
		return -ENOMEM;
	}
	r = k8s_json_add_str(o, "apiVersion", "coordination.k8s.io/v1");
	r = r ? r : k8s_json_add_str(o, "kind", "Lease");
	r = r ? r : k8s_json_add(o, "metadata", meta);
	if (r) {
		json_object_put(spec);
		return r;
	}
	r = k8s_json_add(o, "spec", spec);
	r = r ? r : k8s_json_add_str(meta, "name", name);
	r = r ? r : k8s_json_add_str(meta, "namespace", ns);
	if (!r && rec->resource_version[0])
		r = k8s_json_add_str(meta, "resourceVersion", rec->resource_version);
	r = r ? r : k8s_json_add_str(spec, "holderIdentity", rec->holder);
	r = r ? r : k8s_json_add(spec, "leaseDurationSeconds", json_object_new_int((int)rec->duration_s));
	r = r ? r : k8s_json_add_str(spec, "acquireTime", rec->acquire_time);
	r = r ? r : k8s_json_add_str(spec, "renewTime", rec->renew_time);
	r = r ? r : k8s_json_add(spec, "leaseTransitions", json_object_new_int((int)rec->transitions));
	if (r)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

/* ---- one round ---- */

enum election_action election_decide(const struct lease_record *got, struct election_seen *seen,
				     const char *me, long lease_s, int64_t now_ms,
				     const char *now_text, struct lease_record *next)
{
	char raw[sizeof(seen->raw)];
	bool ours;

	*next = (struct lease_record){ .duration_s = lease_s };
	copy(next->holder, sizeof(next->holder), me);
	copy(next->acquire_time, sizeof(next->acquire_time), now_text);
	copy(next->renew_time, sizeof(next->renew_time), now_text);
	if (!got)
		return ELECTION_CREATE;
	snprintf(raw, sizeof(raw), "%s|%ld|%s|%s|%ld", got->holder, got->duration_s,
		 got->acquire_time, got->renew_time, got->transitions);
	if (strcmp(raw, seen->raw) != 0) {
		copy(seen->raw, sizeof(seen->raw), raw);
		copy(seen->holder, sizeof(seen->holder), got->holder);
		seen->duration_s = got->duration_s;
		seen->changed_ms = now_ms;
	}
	ours = strcmp(got->holder, me) == 0;
	if (got->holder[0] && !ours && seen->changed_ms + (int64_t)seen->duration_s * 1000 > now_ms)
		return ELECTION_WAIT;
	copy(next->resource_version, sizeof(next->resource_version), got->resource_version);
	if (ours) {
		copy(next->acquire_time, sizeof(next->acquire_time), got->acquire_time);
		next->transitions = got->transitions;
	} else {
		next->transitions = got->transitions + 1;
	}
	return ELECTION_UPDATE;
}

/* ---- the running election ---- */

int election_new(const struct election_config *cfg, int stop_fd, struct election **ret)
{
	struct election *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	if (pthread_mutex_init(&e->lock, NULL) != 0) {
		free(e);
		return -ENOMEM;
	}
	e->cfg = *cfg;
	e->stop_fd = stop_fd;
	e->seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	*ret = e;
	return 0;
}

void election_free(struct election *e)
{
	if (!e)
		return;
	pthread_mutex_destroy(&e->lock);
	free(e);
}

bool election_leading(struct election *e)
{
	bool r;

	pthread_mutex_lock(&e->lock);
	r = e->leading && clock_mono_ms() < e->valid_until_ms;
	pthread_mutex_unlock(&e->lock);
	return r;
}

void election_stats(struct election *e, unsigned long *ret_transitions, unsigned long *ret_failures)
{
	pthread_mutex_lock(&e->lock);
	*ret_transitions = e->transitions;
	*ret_failures = e->failures;
	pthread_mutex_unlock(&e->lock);
}

static void note(struct election *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct election *e, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	pthread_mutex_lock(&e->lock);
	e->failures++;
	pthread_mutex_unlock(&e->lock);
	if (!e->cfg.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e->cfg.note(e->cfg.ctx, msg);
}

static char *lease_path(const struct election *e)
{
	_cleanup_free_ char *ns = api_escape(e->cfg.ns), *name = api_escape(e->cfg.name);
	char *p;

	if (!ns || !name || asprintf(&p, "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", ns, name) < 0)
		return NULL;
	return p;
}

/* A request of the election, bounded so that a hung one cannot outlast the renew deadline. */
static int lease_call(struct election *e, struct api_client *c, const char *method, const char *path,
		      struct json_object *body, struct json_object **ret, struct api_status *st,
		      struct cni_err *err)
{
	long timeout = e->stopping ? RELEASE_TIMEOUT_MS : e->cfg.renew_deadline_s * 1000 * 2 / 5;

	return request_json(c, method, path, body, NULL, timeout, ret, st, err);
}

/* One round: 1 when we hold the lease after it, 0 when another does, negative on failure. */
static int round_once(struct election *e, struct api_client *c, const char *path)
{
	_cleanup_(json_object_putp) struct json_object *got = NULL, *out = NULL;
	struct lease_record rec, next;
	struct api_status st;
	struct cni_err err = { 0 };
	enum election_action act;
	char now[40];
	int r;

	r = lease_call(e, c, NULL, path, NULL, &got, &st, &err);
	if (r < 0 && st.http != 404) {
		note(e, "reading the lease: %s", err.msg);
		return r;
	}
	/* No lease yet is no failure: a refused create must report its own error, not the 404. */
	err = (struct cni_err){ 0 };
	if (got && election_lease_parse(got, &rec) < 0) {
		note(e, "the lease %s/%s is not a Lease", e->cfg.ns, e->cfg.name);
		return -EBADMSG;
	}
	micro_time(now, sizeof(now));
	act = election_decide(got ? &rec : NULL, &e->seen, e->cfg.identity, e->cfg.lease_s, clock_mono_ms(),
			      now, &next);
	if (act == ELECTION_WAIT)
		return 0;
	if (election_lease_json(&next, e->cfg.ns, e->cfg.name, &out) < 0)
		return -ENOMEM;
	if (act == ELECTION_CREATE) {
		_cleanup_free_ char *coll = strdup(path);
		char *slash = coll ? strrchr(coll, '/') : NULL;

		if (!slash)
			return -ENOMEM;
		*slash = '\0';
		r = lease_call(e, c, "POST", coll, out, NULL, &st, &err);
	} else {
		r = lease_call(e, c, "PUT", path, out, NULL, &st, &err);
	}
	if (r < 0) {
		/* A conflict is another candidate winning this round: no failure of ours. */
		if (st.http != 409)
			note(e, "%s the lease: %s", act == ELECTION_CREATE ? "creating" : "updating", err.msg);
		return st.http == 409 ? 0 : r;
	}
	return 1;
}

/* Waits @ms or until told to stop; true when told to stop. */
static bool pause_ms(const struct election *e, long ms)
{
	struct pollfd p = { .fd = e->stop_fd, .events = POLLIN };

	return poll(&p, 1, (int)ms) > 0;
}

static void set_leading(struct election *e, bool leading, int64_t valid_until)
{
	bool was;

	pthread_mutex_lock(&e->lock);
	was = e->leading;
	e->leading = leading;
	e->valid_until_ms = valid_until;
	e->transitions += leading && !was;
	pthread_mutex_unlock(&e->lock);
	/* Stopping is no loss of leadership to report. */
	if (was != leading && e->cfg.changed && !e->stopping)
		e->cfg.changed(e->cfg.ctx, leading);
}

/* At the stop: no holder, one second, so that the other replica takes over at once. */
static void release(struct election *e, struct api_client *c, const char *path)
{
	_cleanup_(json_object_putp) struct json_object *got = NULL, *out = NULL;
	struct lease_record rec, next = { .duration_s = 1 };
	struct api_status st;
	struct cni_err err = { 0 };

	if (lease_call(e, c, NULL, path, NULL, &got, &st, &err) < 0 ||
	    election_lease_parse(got, &rec) < 0 || strcmp(rec.holder, e->cfg.identity) != 0)
		return;
	micro_time(next.acquire_time, sizeof(next.acquire_time));
	copy(next.renew_time, sizeof(next.renew_time), next.acquire_time);
	next.transitions = rec.transitions;
	copy(next.resource_version, sizeof(next.resource_version), rec.resource_version);
	if (election_lease_json(&next, e->cfg.ns, e->cfg.name, &out) < 0)
		return;
	if (lease_call(e, c, "PUT", path, out, NULL, &st, &err) < 0)
		note(e, "releasing the lease: %s", err.msg);
	else if (e->cfg.released)
		e->cfg.released(e->cfg.ctx);
}

void election_run(struct election *e, struct api_client *c)
{
	_cleanup_free_ char *path = lease_path(e);
	int64_t valid_until = 0;
	bool leading = false;

	if (!path) {
		note(e, "out of memory");
		return;
	}
	for (;;) {
		int64_t t0 = clock_mono_ms();
		int r = round_once(e, c, path);
		long wait_ms = e->cfg.retry_s * 1000;

		if (r > 0) {
			/* Valid from when the round began: the write landed after that. */
			valid_until = t0 + e->cfg.renew_deadline_s * 1000;
			leading = true;
			set_leading(e, true, valid_until);
		} else if (leading && (r == 0 || clock_mono_ms() >= valid_until)) {
			/* Another holds the lease now, or the deadline passed without a renewal. */
			leading = false;
			set_leading(e, false, 0);
		}
		if (!leading) {
			/*
			 * A candidate looks every retry period (a tenth of jitter keeps replicas out
			 * of step) and again just after the lease it saw expires: a dead leader's
			 * lease is taken over within a retry period of the lease's end, which
			 * client-go's wider jitter (up to 2.2 periods) would not promise.
			 */
			int64_t expiry = e->seen.changed_ms + (int64_t)e->seen.duration_s * 1000 + 50;

			wait_ms += (long)(rand_r(&e->seed) % (unsigned int)(wait_ms / 10 + 1));
			if (e->seen.holder[0] && expiry > clock_mono_ms() && expiry - clock_mono_ms() < wait_ms)
				wait_ms = (long)(expiry - clock_mono_ms());
		} else if (valid_until - clock_mono_ms() < wait_ms) {
			wait_ms = valid_until - clock_mono_ms() > 0 ? (long)(valid_until - clock_mono_ms()) : 0;
		}
		if (pause_ms(e, wait_ms))
			break;
	}
	e->stopping = true;
	if (leading) {
		set_leading(e, false, 0);
		release(e, c, path);
	}
}

int election_identity_make(const char *host, const unsigned char uuid[16], char *buf, size_t size)
{
	size_t n = strnlen(host, ELECTION_IDENTITY_HOST_MAX), o = 0;
	unsigned char u[16];

	if (size < ELECTION_IDENTITY_MAX + 1)
		return -ENOSPC;
	/* A sequence cut by the bound above is invalid too: its bytes become '_' as well. */
	for (size_t i = 0; i < n;) {
		uint32_t cp = 0;
		size_t len = text_utf8_decode(host + i, n - i, &cp);

		if (len == 0 || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
			buf[o++] = '_';
			i += len ? len : 1;
			continue;
		}
		memcpy(buf + o, host + i, len);
		o += len;
		i += len;
	}
	memcpy(u, uuid, sizeof(u));
	/* A version 4 UUID, as controller-runtime's suffix. */
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
	snprintf(buf + o, size - o,
		 "_%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	return 0;
}

int election_identity(char *buf, size_t size)
{
	unsigned char u[16];
	char host[256];

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		return -errno;
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "ipam-controller");
	host[sizeof(host) - 1] = '\0';
	return election_identity_make(host, u, buf, size);
}
