/*
 * gc's miss counts: "<store>.gc", beside the store, read and replaced under the store lock
 *
 * Format, one compact JSON document and a newline, entries sorted by their key:
 *
 *   {"version":1,"misses":[{"pool":"<pool key>","ip":"<ip>","containerID":"...",
 *                           "ifname":"...","created":<Unix seconds>,"count":<n>}, ...]}
 *
 * The key is everything that identifies one allocation, its creation time included, so a
 * count never passes to a later allocation of the same container and address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/ipaddr.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/gc/misses.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/store/store.h"

#define MISSES_VERSION 1
/* Bounded by the store's allocations; cjson_parse() refuses more than CNI_JSON_MAX_BYTES. */
#define MISSES_MAX_BYTES CNI_JSON_MAX_BYTES

struct key {
	const char *pool;
	const char *container_id;
	const char *ifname;
	const struct ip_addr *ip;
	time_t created;
};

static int key_cmp(const struct key *x, const struct key *y)
{
	int c = strcmp(x->pool, y->pool);

	c = c ? c : strcmp(x->container_id, y->container_id);
	c = c ? c : strcmp(x->ifname, y->ifname);
	c = c ? c : ip_addr_cmp(x->ip, y->ip);
	if (!c && x->created != y->created)
		c = x->created < y->created ? -1 : 1;
	return c;
}

static struct key alloc_key(const struct nvipam_alloc *a)
{
	return (struct key){ a->pool, a->container_id, a->ifname, &a->ip, a->created };
}

static struct key entry_key(const struct misses_entry *e)
{
	return (struct key){ e->pool, e->container_id, e->ifname, &e->ip, e->created };
}

int misses_alloc_cmp(const void *a, const void *b)
{
	struct key x = alloc_key(*(const struct nvipam_alloc *const *)a);
	struct key y = alloc_key(*(const struct nvipam_alloc *const *)b);

	return key_cmp(&x, &y);
}

static int entry_cmp(const void *a, const void *b)
{
	struct key x = entry_key(a), y = entry_key(b);

	return key_cmp(&x, &y);
}

char *misses_path(const char *store)
{
	char *p;

	return asprintf(&p, "%s.gc", store) < 0 ? NULL : p;
}

static void entry_free(struct misses_entry *e)
{
	free(e->pool);
	free(e->container_id);
	free(e->ifname);
}

void misses_free(struct misses *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		entry_free(&m->v[i]);
	free(m->v);
	free(m->text);
	*m = (struct misses){ 0 };
}

static int bad(struct cni_err *err, const char *origin, size_t i, const char *what)
{
	return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: misses[%zu]: %s", origin, i, what);
}

static int parse_entry(struct json_object *o, size_t i, const char *origin,
		       struct misses_entry *ret, struct cni_err *err)
{
	const char *pool = NULL, *ip = NULL, *cid = NULL, *ifname = NULL;
	int64_t created = -1, count = 0;
	struct cni_err e = { 0 };

	if (!json_object_is_type(o, json_type_object))
		return bad(err, origin, i, "not an object");
	if (cjson_member_str(o, "pool", &pool, &e) <= 0 || cjson_member_str(o, "ip", &ip, &e) <= 0 ||
	    cjson_member_str(o, "containerID", &cid, &e) <= 0 ||
	    cjson_member_str(o, "ifname", &ifname, &e) <= 0 ||
	    cjson_member_int(o, "created", 0, INT64_MAX, &created, &e) <= 0 ||
	    cjson_member_int(o, "count", 1, MISSES_COUNT_MAX, &count, &e) <= 0)
		return bad(err, origin, i, e.msg[0] ? e.msg : "a member is missing");
	if (ip_addr_parse(ip, &ret->ip) < 0)
		return bad(err, origin, i, "invalid \"ip\"");
	ret->pool = strdup(pool);
	ret->container_id = strdup(cid);
	ret->ifname = strdup(ifname);
	ret->created = (time_t)created;
	ret->count = (unsigned long)count;
	if (!ret->pool || !ret->container_id || !ret->ifname) {
		entry_free(ret);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	return 0;
}

int misses_parse(const char *text, size_t len, const char *origin, struct misses *ret,
		 struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	struct json_object *list = NULL;
	struct misses m = { 0 };
	struct cni_err e = { 0 };
	int64_t version = 0;
	size_t n;
	int r;

	r = cjson_parse(text, len, origin, &root, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(root, json_type_object) ||
	    cjson_member_int(root, "version", INT64_MIN, INT64_MAX, &version, &e) <= 0 ||
	    cjson_member_typed(root, "misses", json_type_array, &list, &e) <= 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "%s: expected {\"version\":%d,\"misses\":[...]}%s%s", origin,
				   MISSES_VERSION, e.msg[0] ? ": " : "", e.msg);
	if (version != MISSES_VERSION)
		return cni_err_set(err, CNI_ERR_DECODE, -EPROTONOSUPPORT,
				   "%s: version %lld, this tool reads %d", origin, (long long)version,
				   MISSES_VERSION);
	n = json_object_array_length(list);
	m.v = calloc(n + 1, sizeof(*m.v));
	if (!m.v)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		r = parse_entry(json_object_array_get_idx(list, i), i, origin, &m.v[i], err);
		if (r < 0) {
			misses_free(&m);
			return r;
		}
		m.n++;
	}
	qsort(m.v, m.n, sizeof(*m.v), entry_cmp);
	*ret = m;
	return 0;
}

int misses_load(int dirfd, const char *name, const char *path, struct misses *ret,
		struct cni_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	r = file_read_at(dirfd, name, MISSES_MAX_BYTES, &text, &len);
	if (r == -ENOENT) {
		*ret = (struct misses){ 0 };
		return 0;
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read %s: %s", path,
				   r == -EFBIG ? "too large" : r == -EINVAL ? "not a regular file"
				   : r == -ELOOP ? "a symbolic link" : strerror(-r));
	r = misses_parse(text, len, path, ret, err);
	if (r < 0) {
		free(text);
		return r;
	}
	ret->text = text;
	ret->len = len;
	return 0;
}

unsigned long misses_get(const struct misses *m, const struct nvipam_alloc *a)
{
	struct key k = alloc_key(a);
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct key x = entry_key(&m->v[mid]);
		int c = key_cmp(&x, &k);

		if (c == 0)
			return m->v[mid].count;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

struct counted {
	const struct nvipam_alloc *a;
	unsigned long count;
};

static int counted_cmp(const void *a, const void *b)
{
	const struct counted *x = a, *y = b;

	return misses_alloc_cmp(&x->a, &y->a);
}

static int add_entry(struct json_object *list, const struct counted *c)
{
	struct json_object *o = json_object_new_object();
	char ip[IP_PREFIX_STRLEN];
	int r;

	if (!o || json_object_array_add(list, o) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	r = k8s_json_add_str(o, "pool", c->a->pool);
	r = r ? r : k8s_json_add_str(o, "ip", ip_addr_format(&c->a->ip, ip, sizeof(ip)));
	r = r ? r : k8s_json_add_str(o, "containerID", c->a->container_id);
	r = r ? r : k8s_json_add_str(o, "ifname", c->a->ifname);
	r = r ? r : k8s_json_add(o, "created", json_object_new_int64((int64_t)c->a->created));
	r = r ? r : k8s_json_add(o, "count", json_object_new_int64((int64_t)c->count));
	return r;
}

int misses_format(const struct nvipam_alloc *const *allocs, const unsigned long *counts, size_t n,
		  char **ret, size_t *ret_len)
{
	_cleanup_(json_object_putp) struct json_object *root = json_object_new_object();
	_cleanup_free_ struct counted *v = calloc(n + 1, sizeof(*v));
	struct json_object *list = json_object_new_array();
	const char *s;
	size_t len;
	int r;

	if (!root || !v || k8s_json_add(root, "version", json_object_new_int(MISSES_VERSION)) < 0 ||
	    k8s_json_add(root, "misses", list) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct counted){ allocs[i], counts[i] };
	qsort(v, n, sizeof(*v), counted_cmp);
	for (size_t i = 0; i < n; i++) {
		r = add_entry(list, &v[i]);
		if (r < 0)
			return r;
	}
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
						 JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		return -ENOMEM;
	len = strlen(s);
	*ret = malloc(len + 2);
	if (!*ret)
		return -ENOMEM;
	memcpy(*ret, s, len);
	(*ret)[len] = '\n';
	(*ret)[len + 1] = '\0';
	*ret_len = len + 1;
	return 0;
}

int misses_save(int dirfd, const char *name, const char *path, const struct misses *old,
		const char *text, size_t len, struct cni_err *err)
{
	const char *step;
	int r;

	if (old->text && old->len == len && memcmp(old->text, text, len) == 0)
		return 0;
	r = file_write_atomic_at(dirfd, name, text, len, 0600, &step);
	/* After the rename the new counts are in place, whatever the directory sync says. */
	if (r < 0 && strcmp(step, "sync directory") != 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write %s: %s: %s", path, step,
				   strerror(-r));
	return 1;
}
