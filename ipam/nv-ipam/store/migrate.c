/* Older stores: the reference nv-ipam node daemon's store file, read and loaded to be written as pool logs */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "common/util/log.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/format.h"
#include "ipam/nv-ipam/store/manifest.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/model.h"
#include "ipam/nv-ipam/store/private.h"

/* The deepest document is the reference layout: root.pools.<key>.entries.<id>.metadata. */
#define STORE_MAX_DEPTH 16

DEFINE_CLEANUP_FUNC(json_tokener_freep, json_tokener *, json_tokener_free);

/* An older store refused (code 5), or out of memory (999). */
#define corrupt(why, r, ...) \
	cni_err_set((why), (r) == -ENOMEM ? CNI_ERR_INTERNAL : CNI_ERR_IO, (r), __VA_ARGS__)

/* What a cjson getter recorded, as corruption of the store (code 5) after @where. */
static int corrupt_at(struct cni_err *why, int r, const char *where)
{
	if (r == -ENOMEM)
		return cni_err_code(why, CNI_ERR_INTERNAL, r);
	cni_err_prefix(why, r, "%s", where);
	return cni_err_code(why, CNI_ERR_IO, r);
}

static int parse_json(const char *data, size_t len, struct json_object **ret, struct cni_err *why)
{
	_cleanup_(json_tokener_freep) json_tokener *tok = NULL;
	enum json_tokener_error jerr;
	struct json_object *o;
	size_t used;

	/*
	 * Not cjson_parse(): its bound is sized for network configs (4 MiB), and a store of
	 * a large CIDRPool block is bigger. Same strictness otherwise.
	 */
	tok = json_tokener_new_ex(STORE_MAX_DEPTH);
	if (!tok)
		return corrupt(why, -ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, data, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o || jerr != json_tokener_success) {
		json_object_put(o);
		if (jerr == json_tokener_continue)
			return corrupt(why, -EINVAL, "unexpected end of JSON input");
		return corrupt(why, -EINVAL, "%s at offset %zu", json_tokener_error_desc(jerr),
			       json_tokener_get_parse_end(tok));
	}
	used = json_tokener_get_parse_end(tok);
	while (used < len && strchr(" \t\r\n", data[used]))
		used++;
	if (used != len) {
		json_object_put(o);
		return corrupt(why, -EINVAL, "invalid character after top-level value at offset %zu", used);
	}
	if (!json_object_is_type(o, json_type_object)) {
		corrupt(why, -EINVAL, "expected an object, got %s", cjson_type_name(o));
		json_object_put(o);
		return -EINVAL;
	}
	*ret = o;
	return 0;
}

/* Optional string member, "" when absent; the pointer is owned by @obj. */
static int str_or_empty(struct json_object *obj, const char *key, const char **ret, struct cni_err *why)
{
	const char *v = "";
	int r = cjson_get_str(obj, key, &v, why);

	if (r < 0)
		return r;
	*ret = v;
	return 0;
}

static int get_ip(struct json_object *obj, const char *key, bool required, bool *ret_has,
		  struct ip_addr *ret, struct cni_err *why)
{
	const char *v = "";
	int r;

	r = str_or_empty(obj, key, &v, why);
	if (r < 0)
		return r;
	if (!*v) {
		if (required)
			return corrupt(why, -EINVAL, "field \"%s\" is missing", key);
		*ret_has = false;
		return 0;
	}
	if (ip_addr_parse(v, ret) < 0)
		return corrupt(why, -EINVAL, "field \"%s\" is not an IP address", key);
	*ret_has = true;
	return 0;
}

static int get_time(struct json_object *obj, const char *key, time_t *ret, struct cni_err *why)
{
	const char *v = "";
	int r;

	r = str_or_empty(obj, key, &v, why);
	if (r < 0)
		return r;
	*ret = 0;
	if (*v && rfc3339_parse(v, ret) < 0)
		return corrupt(why, -EINVAL, "field \"%s\" is not an RFC 3339 time", key);
	return 0;
}

/* Append a copy of @a (its strings in one block). */
static int legacy_push(struct store_legacy *l, const struct nvipam_alloc *a, size_t *cap)
{
	const char *in[] = { a->pool,	       a->container_id, a->ifname, a->network,
			     a->pod_namespace, a->pod_name,	a->pod_uid, a->device_id };
	struct store_legacy_alloc c = { .a = { .ip = a->ip, .created = a->created } };
	const char **out[] = { &c.a.pool,	   &c.a.container_id, &c.a.ifname,  &c.a.network,
			       &c.a.pod_namespace, &c.a.pod_name,     &c.a.pod_uid, &c.a.device_id };
	size_t total = 0;
	char *block, *p;

	if (l->n_allocs == *cap) {
		size_t want = *cap ? *cap * 2 : 16;
		struct store_legacy_alloc *v = realloc(l->allocs, want * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->allocs = v;
		*cap = want;
	}
	for (size_t i = 0; i < ARRAY_SIZE(in); i++)
		total += (in[i] ? strlen(in[i]) : 0) + 1;
	block = malloc(total);
	if (!block)
		return -ENOMEM;
	c.strings = p = block;
	for (size_t i = 0; i < ARRAY_SIZE(in); i++) {
		size_t n = in[i] ? strlen(in[i]) : 0;

		memcpy(p, in[i] ? in[i] : "", n + 1);
		*out[i] = p;
		p += n + 1;
	}
	l->allocs[l->n_allocs++] = c;
	return 0;
}

static int legacy_pool(struct store_legacy *l, const char *key, bool has, const struct ip_addr *ip)
{
	struct store_legacy_pool *v = realloc(l->pools, (l->n_pools + 1) * sizeof(*v));
	char *k;

	if (!v)
		return -ENOMEM;
	l->pools = v;
	k = strdup(key);
	if (!k)
		return -ENOMEM;
	v[l->n_pools++] = (struct store_legacy_pool){ .key = k, .has_last = has,
						       .last_reserved = has ? *ip : (struct ip_addr){ 0 } };
	return 0;
}

/* ---- the reference daemon's ---- */

/*
 * Go's json.Marshal of a string field decoded from @obj[@key] (absent or null: ""),
 * after type checks done by the caller.
 */
static void go_put_str_member(struct text_buf *b, const char *name, struct json_object *obj,
			      const char *key, bool first)
{
	struct json_object *v = cjson_get(obj, key);

	if (!first)
		text_buf_putc(b, ',');
	text_buf_put_json_str(b, name, TEXT_JSON_GO);
	text_buf_putc(b, ':');
	text_buf_put_json_str(b, v ? json_object_get_string(v) : "", TEXT_JSON_GO);
}

/* A map's member: Go's map keys are exact (no case folding), and each is looked at once. */
struct member {
	const char *name;
	struct json_object *value;
};

static int cmp_member(const void *x, const void *y)
{
	return strcmp(((const struct member *)x)->name, ((const struct member *)y)->name);
}

/* The members of @obj sorted as Go sorts map keys (bytewise); NULL only when out of memory. */
static struct member *sorted_members(struct json_object *obj, size_t *ret_n)
{
	size_t n = (size_t)json_object_object_length(obj), i = 0;
	struct member *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (struct json_object_iterator it = json_object_iter_begin(obj),
					 end = json_object_iter_end(obj);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		v[i++] = (struct member){ json_object_iter_peek_name(&it),
					  json_object_iter_peek_value(&it) };
	qsort(v, n, sizeof(*v), cmp_member);
	*ret_n = n;
	return v;
}

static int go_marshal_entries(struct json_object *entries, struct text_buf *b)
{
	_cleanup_free_ struct member *m = NULL;
	size_t n;

	if (!entries) {
		text_buf_puts(b, "null");
		return 0;
	}
	m = sorted_members(entries, &n);
	if (!m)
		return -ENOMEM;
	text_buf_putc(b, '{');
	for (size_t k = 0; k < n; k++) {
		struct json_object *e = m[k].value;
		struct json_object *md = cjson_get(e, "metadata");

		if (k)
			text_buf_putc(b, ',');
		text_buf_put_json_str(b, m[k].name, TEXT_JSON_GO);
		text_buf_puts(b, ":{");
		go_put_str_member(b, "container_id", e, "container_id", true);
		go_put_str_member(b, "interface_name", e, "interface_name", false);
		go_put_str_member(b, "ip_address", e, "ip_address", false);
		text_buf_puts(b, ",\"metadata\":{");
		go_put_str_member(b, "create_time", md, "create_time", true);
		go_put_str_member(b, "pod_uuid", md, "pod_uuid", false);
		go_put_str_member(b, "pod_name", md, "pod_name", false);
		go_put_str_member(b, "pod_namespace", md, "pod_namespace", false);
		go_put_str_member(b, "device_id", md, "device_id", false);
		go_put_str_member(b, "pool_config_snapshot", md, "pool_config_snapshot", false);
		text_buf_puts(b, "}}");
	}
	text_buf_putc(b, '}');
	return 0;
}

/*
 * The reference document as Go's encoding/json writes it for the daemon's types, with
 * "checksum":0 and "released_at" dropped (the daemon's checksum zeroes both), unknown members
 * dropped and maps sorted. Every member was type-checked before. IPs are written as found:
 * a file the daemon wrote holds them as Go prints them.
 */
static int go_marshal_reference(struct json_object *root, int64_t version, struct text_buf *b)
{
	_cleanup_free_ struct member *pm = NULL;
	struct json_object *pools = cjson_get(root, "pools");
	char num[32];
	size_t np;

	snprintf(num, sizeof(num), "%" PRId64, version);
	text_buf_puts(b, "{\"version\":");
	text_buf_puts(b, num);
	text_buf_puts(b, ",\"checksum\":0,\"pools\":");
	if (!pools) {
		text_buf_puts(b, "null}");
		return 0;
	}
	pm = sorted_members(pools, &np);
	if (!pm)
		return -ENOMEM;
	text_buf_putc(b, '{');
	for (size_t i = 0; i < np; i++) {
		struct json_object *pool = pm[i].value;

		if (i)
			text_buf_putc(b, ',');
		text_buf_put_json_str(b, pm[i].name, TEXT_JSON_GO);
		text_buf_puts(b, ":{");
		go_put_str_member(b, "name", pool, "name", true);
		text_buf_puts(b, ",\"entries\":");
		if (go_marshal_entries(cjson_get(pool, "entries"), b) < 0)
			return -ENOMEM;
		go_put_str_member(b, "last_pool_config", pool, "last_pool_config", false);
		go_put_str_member(b, "last_reserved_ip", pool, "last_reserved_ip", false);
		text_buf_putc(b, '}');
	}
	text_buf_puts(b, "}}");
	return 0;
}

static int reference_entry(struct json_object *e, const char *pool_key, const char *where,
			   struct store_legacy *l, size_t *cap, struct cni_err *why)
{
	struct json_object *md = NULL, *unused = NULL;
	struct nvipam_alloc a = { .pool = pool_key, .network = "" };
	const char *snapshot;
	bool has;
	int r;

	if (!json_object_is_type(e, json_type_object))
		return corrupt(why, -EINVAL, "%s: expected an object, got %s", where, cjson_type_name(e));
	if ((r = str_or_empty(e, "container_id", &a.container_id, why)) < 0 ||
	    (r = str_or_empty(e, "interface_name", &a.ifname, why)) < 0 ||
	    (r = get_ip(e, "ip_address", true, &has, &a.ip, why)) < 0 ||
	    (r = cjson_get_typed(e, "metadata", json_type_object, &md, why)) < 0 ||
	    /* newer daemons keep released entries for a cooldown; they still hold their IP */
	    (r = cjson_get_typed(e, "released_at", json_type_string, &unused, why)) < 0 ||
	    (r = str_or_empty(md, "pod_uuid", &a.pod_uid, why)) < 0 ||
	    (r = str_or_empty(md, "pod_name", &a.pod_name, why)) < 0 ||
	    (r = str_or_empty(md, "pod_namespace", &a.pod_namespace, why)) < 0 ||
	    (r = str_or_empty(md, "device_id", &a.device_id, why)) < 0 ||
	    (r = str_or_empty(md, "pool_config_snapshot", &snapshot, why)) < 0 ||
	    (r = get_time(md, "create_time", &a.created, why)) < 0)
		return corrupt_at(why, r, where);
	/* The snapshot is only type-checked: our pool file is the truth about ranges now. */
	if (legacy_push(l, &a, cap) < 0)
		return corrupt(why, -ENOMEM, "out of memory");
	return 0;
}

/* Type-check the daemon's pool records and count their entries. */
static int reference_check_pools(struct json_object *pools, size_t *ret_total, struct cni_err *why)
{
	size_t total = 0, i = 0;
	char where[96];
	int r;

	for (struct json_object_iterator it = json_object_iter_begin(pools),
					 end = json_object_iter_end(pools);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *key = json_object_iter_peek_name(&it);
		struct json_object *pool = json_object_iter_peek_value(&it);
		struct json_object *entries = NULL;
		const char *str;

		snprintf(where, sizeof(where), "pools member %zu", i++);
		if (!json_object_is_type(pool, json_type_object))
			return corrupt(why, -EINVAL, "%s: expected an object, got %s", where,
				       cjson_type_name(pool));
		if (!*key)
			return corrupt(why, -EINVAL, "%s: empty pool key", where);
		if ((r = str_or_empty(pool, "name", &str, why)) < 0 ||
		    (r = str_or_empty(pool, "last_pool_config", &str, why)) < 0 ||
		    (r = str_or_empty(pool, "last_reserved_ip", &str, why)) < 0 ||
		    (r = cjson_get_typed(pool, "entries", json_type_object, &entries, why)) < 0)
			return corrupt_at(why, r, where);
		if (entries)
			total += (size_t)json_object_object_length(entries);
	}
	*ret_total = total;
	return 0;
}

static int reference_convert(struct json_object *pools, struct store_legacy *l, size_t *cap,
			     struct cni_err *why)
{
	char where[96];
	size_t i = 0;
	int r;

	for (struct json_object_iterator it = json_object_iter_begin(pools),
					 end = json_object_iter_end(pools);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *pkey = json_object_iter_peek_name(&it);
		struct json_object *pool = json_object_iter_peek_value(&it);
		struct json_object *entries = cjson_get(pool, "entries");
		bool has = false;
		struct ip_addr ip;

		size_t k = 0;

		snprintf(where, sizeof(where), "pools member %zu", i++);
		r = get_ip(pool, "last_reserved_ip", false, &has, &ip, why);
		if (r < 0)
			return corrupt_at(why, r, where);
		if (legacy_pool(l, pkey, has, &ip) < 0)
			return corrupt(why, -ENOMEM, "out of memory");
		if (!entries)
			continue;
		for (struct json_object_iterator eit = json_object_iter_begin(entries),
						 eend = json_object_iter_end(entries);
		     !json_object_iter_equal(&eit, &eend); json_object_iter_next(&eit)) {
			snprintf(where, sizeof(where), "pools member %zu: entries member %zu", i - 1,
				 k++);
			r = reference_entry(json_object_iter_peek_value(&eit), pkey, where, l, cap, why);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/*
 * FNV-1a-32 of @data with every U+FFFD written "\ufffd": how an older nv-ipam's handover
 * counted a byte that was not UTF-8 (Go's encoder writes it so, but the daemon's checksum
 * is of the decoded form, U+FFFD as it is). A store it wrote stays readable.
 */
static uint32_t hash_escaped_fffd(const char *data, size_t len)
{
	static const char fffd[] = "\xef\xbf\xbd";
	uint32_t h = TEXT_HASH32_INIT;
	size_t i = 0;

	while (i < len) {
		const char *hit = memmem(data + i, len - i, fffd, 3);
		size_t run = hit ? (size_t)(hit - (data + i)) : len - i;

		h = text_hash32(data + i, run, h);
		i += run;
		if (hit) {
			h = text_hash32("\\ufffd", 6, h);
			i += 3;
		}
	}
	return h;
}

static int reference_read(struct json_object *root, int64_t version, struct store_legacy *l,
			  struct cni_err *why)
{
	struct json_object *pools = NULL;
	struct text_buf b = { 0 };
	int64_t checksum = 0;
	size_t total = 0, cap = 0;
	uint32_t sum;
	int r;

	if (version != 1)
		return corrupt(why, -EPROTONOSUPPORT,
			       "unsupported nv-ipam daemon store version %" PRId64 " (reads 1)", version);
	r = cjson_get_int(root, "checksum", 0, UINT32_MAX, &checksum, why);
	if (r < 0)
		return cni_err_code(why, CNI_ERR_IO, r);
	/* The daemon refuses to start on this; so do we rather than trust the file. */
	if (checksum == 0)
		return corrupt(why, -EINVAL, "checksum not set in store file");
	r = cjson_get_typed(root, "pools", json_type_object, &pools, why);
	if (r < 0)
		return cni_err_code(why, CNI_ERR_IO, r);
	if (pools && (r = reference_check_pools(pools, &total, why)) < 0)
		return r;
	if (total) {
		l->allocs = calloc(total, sizeof(*l->allocs));
		if (!l->allocs)
			return corrupt(why, -ENOMEM, "out of memory");
		cap = total;
	}
	if (pools && (r = reference_convert(pools, l, &cap, why)) < 0)
		return r;
	r = go_marshal_reference(root, version, &b);
	if (r < 0 || b.oom) {
		text_buf_free(&b);
		return corrupt(why, -ENOMEM, "out of memory");
	}
	sum = text_hash32(b.data, b.len, TEXT_HASH32_INIT);
	if (sum != (uint32_t)checksum && hash_escaped_fffd(b.data, b.len) == (uint32_t)checksum) {
		log_warning("nv-ipam daemon store: its checksum counts U+FFFD as its JSON escape (an "
			    "older nv-ipam's handover of a name that was not UTF-8): read as it was "
			    "written; the reference daemon refuses such a file");
		sum = (uint32_t)checksum;
	}
	text_buf_free(&b);
	if (sum != (uint32_t)checksum)
		return corrupt(why, -EINVAL, "checksum mismatch (recorded %" PRId64 ", computed %" PRIu32 ")",
			       checksum, sum);
	l->checksum = sum;
	return 0;
}

/* The daemon's layout: a checksum, or pools holding "entries" (ours have neither). */
static bool is_reference(struct json_object *root)
{
	struct json_object *pools = cjson_get(root, "pools");

	if (cjson_get(root, "checksum"))
		return true;
	if (!json_object_is_type(pools, json_type_object))
		return false;
	for (struct json_object_iterator it = json_object_iter_begin(pools),
					 end = json_object_iter_end(pools);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		if (json_object_is_type(json_object_iter_peek_value(&it), json_type_object) &&
		    cjson_get(json_object_iter_peek_value(&it), "entries"))
			return true;
	return false;
}

/* ---- into the model ---- */

/* Find an IP held twice in one pool among every allocation (an older store). */
static int legacy_duplicates(const struct nvipam_store *s, struct cni_err *err)
{
	_cleanup_free_ const struct nvipam_alloc **v = NULL;
	char ip[IP_PREFIX_STRLEN];

	if (s->n_allocs < 2)
		return 0;
	v = malloc(s->n_allocs * sizeof(*v));
	if (!v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_allocs; i++)
		v[i] = &s->allocs[i].a;
	qsort(v, s->n_allocs, sizeof(*v), nvipam_alloc_ptr_cmp);
	for (size_t i = 1; i < s->n_allocs; i++)
		if (nvipam_alloc_ptr_cmp(&v[i - 1], &v[i]) == 0)
			return cni_err_set(err, CNI_ERR_IO, -EINVAL,
					   "store file %s is corrupt: IP %s is held twice in pool \"%s\"",
					   s->path, ip_addr_format(&v[i]->ip, ip, sizeof(ip)), v[i]->pool);
	return 0;
}

/*
 * A record of an older store that no pool log line can hold (a string of hundreds of
 * KiB) keeps its address, or the next ADD hands it out again: its pod's names are
 * dropped and, when its container ID and interface alone are too long, they become
 * "oversized-<address>", which no runtime's DEL names: the address stays held until
 * `nv-ipam-tool release` frees it. Refusing the record would refuse every pool.
 */
static int legacy_fit(struct nvipam_store *s, struct nvipam_alloc *a)
{
	static const int steps = 2;
	char buf[IP_PREFIX_STRLEN], id[IP_PREFIX_STRLEN + 16];

	for (int step = 0;; step++) {
		struct store_line l = { .type = 'A', .partner = "", .alloc = *a };
		struct text_buf b = { 0 };
		int r = store_format_line(&b, &l);

		r = b.oom ? -ENOMEM : r;
		text_buf_free(&b);
		if (r != -E2BIG || step == steps)
			return r;
		ip_addr_format(&a->ip, buf, sizeof(buf));
		if (step == 0) {
			log_warning("store %s: the older store's allocation of %s in pool %s is too "
				    "long to record: kept without its network and pod names", s->path,
				    buf, a->pool);
			a->network = a->pod_namespace = a->pod_name = a->pod_uid = a->device_id = "";
			continue;
		}
		snprintf(id, sizeof(id), "oversized-%s", buf);
		log_warning("store %s: the older store's allocation of %s in pool %s has a container "
			    "ID or interface too long to record: kept as container %s; once its pod is "
			    "gone, free it with nv-ipam-tool release --pool %s --ip %s", s->path, buf,
			    a->pool, id, a->pool, buf);
		r = store_model_copy(s, (const char *const[]){ id, "net0" },
				     (const char **const[]){ &a->container_id, &a->ifname }, 2);
		if (r < 0)
			return r;
	}
}

int store_migrate_load(struct nvipam_store *s, struct store_legacy *l, bool allow_dups,
		       struct cni_err *err)
{
	int r = store_model_reserve(s, l->n_allocs);

	for (size_t i = 0; r >= 0 && i < l->n_pools; i++) {
		struct store_pool *p = store_model_pool(s, l->pools[i].key);

		if (!p && (r = store_model_add_pool(s, l->pools[i].key, NULL)) >= 0)
			p = &s->pools[r];
		if (p) {
			p->has_last = l->pools[i].has_last;
			p->last_reserved = l->pools[i].last_reserved;
		}
	}
	for (size_t i = 0; r >= 0 && i < l->n_allocs; i++) {
		struct nvipam_alloc *a = &l->allocs[i].a;
		struct store_pool *p = store_model_pool(s, a->pool);

		if (!p) {
			r = store_model_add_pool(s, a->pool, NULL);
			p = r >= 0 ? &s->pools[r] : NULL;
		}
		/* The store owns the block from here. */
		if (r < 0 || (r = store_model_keep(s, TAKE_PTR(l->allocs[i].strings))) < 0 ||
		    (r = legacy_fit(s, a)) < 0)
			break;
		a->pool = p->key;
		s->allocs[s->n_allocs++] = (struct store_alloc){ .a = *a };
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	s->migrate = true;
	s->dirty = true;
	return allow_dups ? 0 : legacy_duplicates(s, err);
}

/* A store file's JSON and its "version": 1 with both, 0 when the version is missing. */
static int parse_versioned(const char *data, size_t len, struct json_object **ret_root,
			   int64_t *ret_version, struct cni_err *why)
{
	_cleanup_free_ char *scrubbed = NULL;
	struct json_object *o = NULL;
	struct cni_err strict = { 0 }, again = { 0 };
	size_t n;
	int r;

	if (memchr(data, '\0', len))
		return corrupt(why, -EINVAL, "NUL byte in file");
	r = parse_json(data, len, ret_root, &strict);
	/*
	 * The daemon (Go) reads a byte that is not UTF-8 as U+FFFD, so a file of its format
	 * holding one is read so too (a hand's edit, a tool's write); ours never holds one.
	 */
	if (r < 0 && !text_utf8_valid(data, len)) {
		scrubbed = text_utf8_scrub(data, len, &n);
		if (!scrubbed)
			return corrupt(why, -ENOMEM, "out of memory");
		if (parse_json(scrubbed, n, &o, &again) == 0 && is_reference(o)) {
			*ret_root = o;
			r = 0;
		} else {
			json_object_put(o);
		}
	}
	if (r < 0) {
		*why = strict;
		return r;
	}
	r = cjson_get_int(*ret_root, "version", INT64_MIN, INT64_MAX, ret_version, why);
	return r < 0 ? cni_err_code(why, CNI_ERR_IO, r) : r;
}

int store_migrate_read(const char *data, size_t len, enum store_file_kind *ret_kind,
		       struct store_legacy *ret, struct cni_err *why)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct store_legacy l = { 0 };
	int64_t version = 0;
	int r;

	*ret = (struct store_legacy){ 0 };
	*ret_kind = STORE_FILE_NONE;
	if (len == 0)
		return 0;
	r = parse_versioned(data, len, &root, &version, why);
	if (r < 0)
		return r;
	/* Parsed, yet not a store at all: another file named in its place. */
	if (r == 0)
		return corrupt(why, -ENOMSG, "field \"version\" is missing");
	if (is_reference(root)) {
		*ret_kind = STORE_FILE_REFERENCE;
		r = reference_read(root, version, &l, why);
	} else if (version == STORE_MANIFEST_VERSION) {
		*ret_kind = STORE_FILE_CURRENT;
	} else {
		r = corrupt(why, -EPROTONOSUPPORT,
			    "unsupported version %" PRId64 " (this plugin reads version %d and the "
			    "nv-ipam node daemon's store)", version, STORE_MANIFEST_VERSION);
	}
	if (r < 0) {
		store_migrate_free(&l);
		return r;
	}
	*ret = l;
	return 0;
}

void store_migrate_free(struct store_legacy *l)
{
	for (size_t i = 0; i < l->n_allocs; i++)
		free(l->allocs[i].strings);
	free(l->allocs);
	for (size_t i = 0; i < l->n_pools; i++)
		free(l->pools[i].key);
	free(l->pools);
	*l = (struct store_legacy){ 0 };
}

/* ---- releasing in the reference daemon's file ---- */

/*
 * An entry of the attachment, found as the daemon's cleaner finds it: by its container_id
 * and interface_name, whatever its key ("<container>_<ifname>" as the daemon writes it,
 * "<container>_<ifname>_<ip>" as an older nv-ipam handed a second address over, or another
 * a hand or a tool wrote). The key alone would also take an entry of the attachment whose
 * names join to the same key ("a_b" and "c" as "a" and "b_c").
 */
static bool entry_of(struct json_object *e, const char *container_id, const char *ifname)
{
	struct json_object *c = cjson_get(e, "container_id"), *i = cjson_get(e, "interface_name");

	return c && i && (size_t)json_object_get_string_len(c) == strlen(container_id) &&
	       strcmp(json_object_get_string(c), container_id) == 0 &&
	       (size_t)json_object_get_string_len(i) == strlen(ifname) &&
	       strcmp(json_object_get_string(i), ifname) == 0;
}

/* Drop the attachment's entries from every pool of @pools; the count is added to @n. */
static int drop_entries(struct json_object *pools, const char *container_id, const char *ifname,
			size_t *n)
{
	for (struct json_object_iterator it = json_object_iter_begin(pools),
					 end = json_object_iter_end(pools);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		struct json_object *entries = cjson_get(json_object_iter_peek_value(&it), "entries");
		_cleanup_free_ struct member *m = NULL;
		size_t k;

		if (!entries)
			continue;
		/* Names copied first: deleting a member while iterating over them is not allowed. */
		m = sorted_members(entries, &k);
		if (!m)
			return -ENOMEM;
		for (size_t j = 0; j < k; j++) {
			_cleanup_free_ char *name = NULL;

			if (!entry_of(m[j].value, container_id, ifname))
				continue;
			/* The member's own name goes with it. */
			name = strdup(m[j].name);
			if (!name)
				return -ENOMEM;
			json_object_object_del(entries, name);
			(*n)++;
		}
	}
	return 0;
}

int store_migrate_release(const char *data, size_t len, const char *container_id,
			  const char *ifname, struct text_buf *out, size_t *ret_n,
			  struct cni_err *why)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct store_legacy l = { 0 };
	struct text_buf b = { 0 };
	struct json_object *pools;
	int64_t version = 0;
	const char *text;
	size_t n = 0;
	uint32_t sum;
	int r;

	*ret_n = 0;
	if (len == 0)
		return -ENODATA;
	r = parse_versioned(data, len, &root, &version, why);
	if (r < 0)
		return r;
	if (r == 0 || !is_reference(root))
		return -ENODATA;
	/* Checked whole as the daemon checks it: a file it would refuse is not edited. */
	r = reference_read(root, version, &l, why);
	store_migrate_free(&l);
	if (r < 0)
		return r;
	pools = cjson_get(root, "pools");
	if (pools && (r = drop_entries(pools, container_id, ifname, &n)) < 0)
		return corrupt(why, r, "out of memory");
	if (n == 0)
		return 0;
	r = go_marshal_reference(root, version, &b);
	if (r < 0 || b.oom) {
		text_buf_free(&b);
		return corrupt(why, -ENOMEM, "out of memory");
	}
	sum = text_hash32(b.data, b.len, TEXT_HASH32_INIT);
	text_buf_free(&b);
	/* In place: the members keep their order, and what the daemon alone reads stays. */
	if (json_object_object_add(root, "checksum", json_object_new_int64(sum)) < 0)
		return corrupt(why, -ENOMEM, "out of memory");
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
							    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		return corrupt(why, -ENOMEM, "out of memory");
	text_buf_puts(out, text);
	if (out->oom)
		return corrupt(why, -ENOMEM, "out of memory");
	*ret_n = n;
	return 0;
}
