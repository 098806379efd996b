/* bandwidth network config: ingress and egress rate and burst, from the config or the runtime */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "common/cni/plugin.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/log.h"
#include "plugins/bandwidth/config.h"

static const char *const top_keys[] = { "ingressRate", "ingressBurst", "egressRate", "egressBurst", NULL };

const struct cni_conf_keys bandwidth_config_keys[] = {
	{ NULL, top_keys },
	{ 0 },
};

static const char *const keys[] = { "ingressRate", "ingressBurst", "egressRate", "egressBurst" };

/* Whether an object has a member of that name in any case, null or not (Go's decoder's view). */
static bool present(struct json_object *o, const char *key)
{
	struct json_object_iterator it, end;

	if (!o || !json_object_is_type(o, json_type_object))
		return false;
	end = json_object_iter_end(o);
	for (it = json_object_iter_begin(o); !json_object_iter_equal(&it, &end);
	     json_object_iter_next(&it))
		if (strcasecmp(json_object_iter_peek_name(&it), key) == 0)
			return true;
	return false;
}

/* A Go uint64: an integer from 0 to 2^64 - 1, nothing else. */
static int get_u64(struct json_object *o, const char *key, const char *where, uint64_t *ret,
		   struct cni_err *err)
{
	struct json_object *v = cjson_get(o, key);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "field \"%s%s\": expected an integer from 0 to 18446744073709551615, "
				   "got %s", where, key, json_object_to_json_string(v));
	*ret = json_object_get_uint64(v);
	return 1;
}

static int check_pair(const struct bandwidth_limit *l, struct cni_err *err)
{
	if (l->burst == 0 && l->rate != 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "if rate is set, burst must also be set");
	if (l->rate == 0 && l->burst != 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "if burst is set, rate must also be set");
	if (l->burst / 8 >= UINT32_MAX)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "burst cannot be more than 4GB");
	return 0;
}

bool bandwidth_limit_set(const struct bandwidth_limit *l)
{
	return l->rate > 0 && l->burst > 0;
}

int bandwidth_tbf(const struct bandwidth_limit *l, const char *what, struct tc_tbf *ret,
		  struct cni_err *err)
{
	uint64_t rate = l->rate / 8, burst = l->burst / 8;
	double usec, limit, bytes;
	struct tc_tbf t;
	int r;

	if (rate == 0 || burst == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ERANGE,
				   "%s: a rate or burst of less than 8 bits (a byte) cannot shape "
				   "anything", what);
	/*
	 * Upstream's float64 arithmetic, in its order. A bucket past 2^32 of the kernel's
	 * ticks (275 s at the rate) wraps in upstream's conversions; a runtime asks for one
	 * when it means no burst limit (containerd's burst is 2^32 - 1 bits): tbf's largest
	 * bucket is what it gets here.
	 */
	usec = (double)burst * 1000000.0 / (double)rate;
	r = usec > (double)UINT32_MAX ? -ERANGE : tc_ticks((uint32_t)usec, &t.buffer);
	if (r == -ERANGE) {
		log_debug("%s: a burst of %llu bits at %llu bits/s is more than tbf's largest bucket: "
			 "its largest it is", what, (unsigned long long)l->burst,
			 (unsigned long long)l->rate);
		t.buffer = UINT32_MAX;
		r = 0;
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot read the scheduler's clock: %s",
				   strerror(-r));
	limit = (double)rate * BANDWIDTH_LATENCY_US / 1000000.0;
	if (limit + (double)burst > (double)UINT32_MAX)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ERANGE,
				   "%s: a rate of %llu bits/s and a burst of %llu bits queue 4 GiB or "
				   "more (upstream's limit wraps)", what, (unsigned long long)l->rate,
				   (unsigned long long)l->burst);
	/*
	 * Upstream cuts the time to whole microseconds and the kernel its bucket to whole
	 * ticks: what is left must hold a byte, or tbf refuses it.
	 */
	if ((r = tc_bucket_bytes(t.buffer, rate, &bytes)) < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot read the scheduler's clock: %s",
				   strerror(-r));
	if (bytes < 1.0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ERANGE,
				   "%s: a burst of %llu bits at %llu bits/s makes a bucket that holds "
				   "less than a byte (it lasts under a microsecond, cut to the "
				   "scheduler's ticks)", what, (unsigned long long)l->burst,
				   (unsigned long long)l->rate);
	t.rate = rate;
	t.limit = (uint32_t)limit + (uint32_t)burst;
	*ret = t;
	return 0;
}

/* One direction's pair, checked and its tbf tried, so that nothing wrong reaches the kernel. */
static int load_pair(struct json_object *o, const char *where, int first,
		     struct bandwidth_limit *l, struct cni_err *err)
{
	struct tc_tbf t;
	int r;

	if ((r = get_u64(o, keys[first], where, &l->rate, err)) < 0 ||
	    (r = get_u64(o, keys[first + 1], where, &l->burst, err)) < 0 ||
	    (r = check_pair(l, err)) < 0)
		return r;
	if (bandwidth_limit_set(l) && (r = bandwidth_tbf(l, first ? "egress" : "ingress", &t, err)) < 0)
		return r;
	return 0;
}

int bandwidth_config_load(const struct cni_ctx *ctx, struct bandwidth_conf *ret,
			  struct cni_err *err)
{
	struct bandwidth_conf c = { 0 };
	struct json_object *o = ctx->conf.root, *rc = NULL;
	const char *where = "";
	bool top = false;
	int r;

	for (size_t i = 0; i < 4 && !top; i++)
		top = present(o, keys[i]);
	if (!top) {
		r = cjson_get_typed(ctx->conf.root, "runtimeConfig", json_type_object, &rc, err);
		if (r > 0)
			r = cjson_get_typed(rc, "bandwidth", json_type_object, &o, err);
		if (r < 0)
			return cni_err_prefix(err, r, "failed to parse network configuration");
		if (r == 0) {
			*ret = c;
			return 0;
		}
		c.from_runtime = true;
		where = "runtimeConfig.bandwidth.";
	}
	if ((r = load_pair(o, where, 0, &c.ingress, err)) < 0 ||
	    (r = load_pair(o, where, 2, &c.egress, err)) < 0)
		return r;
	*ret = c;
	return 0;
}
