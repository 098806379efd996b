/*
 * A node's pool file from the pools' status
 *
 * For every IPPool and CIDRPool with an entry for the node in status.allocations, the
 * pool file gets what nv-ipam's node side needs (see ipam/nv-ipam/pool/pool.c): the spec's
 * network, gateway, exclusions, perNodeExclusions, routes and defaultGateway, plus the
 * node's block or prefix. Entries the reference node daemon refuses are left out with a
 * note (carve_entry_check(): an invalid spec; for a CIDRPool a prefix or gateway that is
 * not the node's to use), and so are those nv-ipam's own loader refuses: both node-side
 * programs, nv-ipam-tool node-pools and ipam-node, write the same file from the same pools.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/k8s/carve.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/nodefile.h"
#include "ipam/nv-ipam/pool/pool.h"

/* Copies @key of @from (skipping "" when @nonempty); a wrong type is left for validation. */
static int copy_str(struct json_object *to, struct json_object *from, const char *key,
		    bool nonempty)
{
	struct json_object *v = k8s_object_member(from, key, NULL);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return k8s_json_add(to, key, json_object_get(v));
	if (nonempty && !*json_object_get_string(v))
		return 0;
	/* Whole, an embedded NUL included: the node side refuses it rather than read less. */
	return k8s_json_add(to, key, json_object_new_string_len(json_object_get_string(v),
								json_object_get_string_len(v)));
}

/* An array of objects, each reduced to the members in @keys (the node side validates them). */
static int copy_list(struct json_object *to, struct json_object *spec, const char *key,
		     const char *const *keys)
{
	struct json_object *arr = k8s_object_member(spec, key, NULL), *out;

	if (!arr || !json_object_is_type(arr, json_type_array))
		return arr ? k8s_json_add(to, key, json_object_get(arr)) : 0;
	if (json_object_array_length(arr) == 0)
		return 0;
	out = json_object_new_array();
	if (k8s_json_add(to, key, out) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i), *o;

		if (!json_object_is_type(e, json_type_object)) {
			if (json_object_array_add(out, json_object_get(e)) < 0)
				return -ENOMEM;
			continue;
		}
		o = json_object_new_object();
		if (!o || json_object_array_add(out, o) < 0) {
			json_object_put(o);
			return -ENOMEM;
		}
		for (size_t k = 0; keys[k]; k++) {
			struct json_object *v = k8s_object_member(e, keys[k], NULL);

			if (v && k8s_json_add(o, keys[k], json_object_get(v)) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* The node's status entry of @pool, NULL when it has none. */
static struct json_object *node_allocation(struct json_object *pool, const char *node)
{
	struct json_object *arr = k8s_object_member(pool, "status", "allocations");

	for (size_t i = 0; json_object_is_type(arr, json_type_array) &&
			   i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		struct json_object *n = k8s_object_member(e, "nodeName", NULL);

		if (json_object_is_type(n, json_type_string) && strcmp(json_object_get_string(n), node) == 0)
			return e;
	}
	return NULL;
}

static int build_entry(struct json_object *pool, bool cidrpool, struct json_object *alloc,
		       struct json_object **ret)
{
	static const char *const excl_keys[] = { "startIP", "endIP", NULL };
	static const char *const index_keys[] = { "startIndex", "endIndex", NULL };
	static const char *const route_keys[] = { "dst", NULL };
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();
	struct json_object *spec = k8s_object_member(pool, "spec", NULL);
	struct json_object *def = k8s_object_member(spec, "defaultGateway", NULL);
	int r;

	if (!o)
		return -ENOMEM;
	if (cidrpool) {
		r = copy_str(o, spec, "cidr", false);
		r = r ? r : copy_str(o, alloc, "prefix", false);
		r = r ? r : copy_str(o, alloc, "gateway", true);
	} else {
		r = copy_str(o, spec, "subnet", false);
		r = r ? r : copy_str(o, alloc, "startIP", false);
		r = r ? r : copy_str(o, alloc, "endIP", false);
		r = r ? r : copy_str(o, spec, "gateway", true);
	}
	r = r ? r : copy_list(o, spec, "exclusions", excl_keys);
	r = r ? r : copy_list(o, spec, "perNodeExclusions", index_keys);
	r = r ? r : copy_list(o, spec, "routes", route_keys);
	if (!r && def && !(json_object_is_type(def, json_type_boolean) && !json_object_get_boolean(def)))
		r = k8s_json_add(o, "defaultGateway", json_object_get(def));
	if (r < 0)
		return r;
	*ret = TAKE_PTR(o);
	return 0;
}

/* Whether nv-ipam's own loader accepts the entry; notes why not. */
static bool entry_valid(const char *key, struct json_object *entry, FILE *notes)
{
	_cleanup_free_ char *doc = NULL;
	struct nvipam_pools pools = { 0 };
	struct cni_err err = { 0 };
	const char *text = json_object_to_json_string_ext(entry, JSON_C_TO_STRING_PLAIN);
	_cleanup_(json_object_putp) struct json_object *k = json_object_new_string(key);
	char q[K8S_QUOTE_SIZE];

	if (!k || asprintf(&doc, "{\"pools\":{%s:%s}}",
			   json_object_to_json_string_ext(k, JSON_C_TO_STRING_PLAIN), text) < 0) {
		doc = NULL;
		fprintf(notes, "skipping pool \"%s\": out of memory\n", k8s_quote(key, q, sizeof(q)));
		return false;
	}
	if (nvipam_pools_parse(doc, strlen(doc), "(generated)", &pools, &err) < 0) {
		fprintf(notes, "skipping pool \"%s\": %s\n", k8s_quote(key, q, sizeof(q)), err.msg);
		return false;
	}
	nvipam_pools_free(&pools);
	return true;
}

struct keyed {
	char *key;
	struct json_object *entry;
};

static int keyed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

static void keyed_free(struct keyed *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		json_object_put(v[i].entry);
	}
	free(v);
}

int nodefile_render(const struct k8s_objects *objs, const char *node, char **ret, FILE *notes,
		    struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *root = json_object_new_object();
	struct json_object *pools = json_object_new_object();
	struct keyed *v = calloc(objs->n_items ? objs->n_items : 1, sizeof(*v));
	size_t n = 0;
	int r = -ENOMEM;

	if (!root || !v || k8s_json_add(root, "nodeName", json_object_new_string(node)) < 0 ||
	    k8s_json_add(root, "pools", pools) < 0)
		goto out;
	for (size_t i = 0; i < objs->n_items; i++) {
		struct json_object *it = objs->items[i], *alloc, *entry = NULL;
		const char *kind = k8s_object_kind(it), *name = k8s_object_name(it);
		char q[K8S_QUOTE_SIZE];
		struct cni_err why = { 0 };
		int checked;
		bool cidrpool = strcmp(kind, "CIDRPool") == 0;
		char *key;

		if (!cidrpool && strcmp(kind, "IPPool") != 0) {
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"item %zu is a \"%s\", not an IPPool or a CIDRPool", i,
					k8s_quote(kind, q, sizeof(q)));
			goto out;
		}
		if (!name) {
			fprintf(notes, "skipping a %s without a name\n", k8s_quote(kind, q, sizeof(q)));
			continue;
		}
		alloc = node_allocation(it, node);
		if (!alloc)
			continue;
		if (asprintf(&key, "%s%s", cidrpool ? "cidrpool/" : "", name) < 0)
			goto out;
		checked = carve_entry_check(it, node, alloc, &why);
		if (checked == -ENOMEM) {
			free(key);
			goto out;
		}
		if (checked < 0) {
			fprintf(notes, "skipping pool \"%s\": %s\n", k8s_quote(key, q, sizeof(q)), why.msg);
			free(key);
			continue;
		}
		if (build_entry(it, cidrpool, alloc, &entry) < 0) {
			free(key);
			goto out;
		}
		v[n++] = (struct keyed){ .key = key, .entry = entry };
	}
	qsort(v, n, sizeof(*v), keyed_cmp);
	for (size_t i = 0; i < n; i++) {
		char q[K8S_QUOTE_SIZE];

		if (i > 0 && strcmp(v[i - 1].key, v[i].key) == 0) {
			fprintf(notes, "skipping pool \"%s\": listed twice\n",
				k8s_quote(v[i].key, q, sizeof(q)));
			continue;
		}
		if (!entry_valid(v[i].key, v[i].entry, notes))
			continue;
		if (k8s_json_add(pools, v[i].key, json_object_get(v[i].entry)) < 0)
			goto out;
	}
	if (asprintf(ret, "%s\n", json_object_to_json_string_ext(root, K8S_JSON_PRETTY)) < 0)
		goto out;
	r = 0;
out:
	keyed_free(v, n);
	if (r == -ENOMEM)
		return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
	return r;
}

static const char *entry_summary(struct json_object *e, char *buf, size_t len)
{
	struct json_object *p = k8s_object_member(e, "prefix", NULL);

	if (p)
		snprintf(buf, len, "%s", json_object_get_string(p));
	else
		snprintf(buf, len, "%s-%s", json_object_get_string(k8s_object_member(e, "startIP", NULL)),
			 json_object_get_string(k8s_object_member(e, "endIP", NULL)));
	return buf;
}

void nodefile_changes(const char *old_text, size_t old_len, const char *new_text, FILE *out)
{
	_cleanup_(json_object_putp) struct json_object *old = NULL, *cur = NULL;
	struct json_object *op, *np;
	struct cni_err e = { 0 };
	char a[128], b[128];

	if (old_text && cjson_parse(old_text, old_len, "old pool file", &old, &e) < 0)
		old = NULL;
	if (cjson_parse(new_text, strlen(new_text), "new pool file", &cur, &e) < 0)
		return;
	op = k8s_object_member(old, "pools", NULL);
	np = k8s_object_member(cur, "pools", NULL);
	if (!json_object_is_type(np, json_type_object))
		return;
	for (struct json_object_iterator it = json_object_iter_begin(np), end = json_object_iter_end(np);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *key = json_object_iter_peek_name(&it);
		struct json_object *val = json_object_iter_peek_value(&it);
		struct json_object *was = k8s_object_member(op, key, NULL);

		if (was && json_object_equal(was, val))
			continue;
		fputs("pool ", out);
		k8s_fput_escaped(out, key);
		if (!was)
			fprintf(out, ": added (%s)\n", entry_summary(val, a, sizeof(a)));
		else
			fprintf(out, ": changed (%s -> %s)\n", entry_summary(was, a, sizeof(a)),
				entry_summary(val, b, sizeof(b)));
	}
	if (!json_object_is_type(op, json_type_object))
		return;
	for (struct json_object_iterator it = json_object_iter_begin(op), end = json_object_iter_end(op);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		if (k8s_object_member(np, json_object_iter_peek_name(&it), NULL))
			continue;
		fputs("pool ", out);
		k8s_fput_escaped(out, json_object_iter_peek_name(&it));
		fputs(": removed\n", out);
	}
}
