/* The node's pod listing (kubectl get pods -o json): which pods the API has */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/cni/error.h"
#include "common/cni/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/pods.h"

/* Where kubelet keeps a static pod's own UID on its mirror pod in the API. */
#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"
#define UID_MAX_LEN 128

/* A DNS label (namespaces; @dots false) or subdomain (pod names): what the API enforces. */
static bool valid_dns_name(const char *s, size_t max, bool dots)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && c != '-' && !(dots && c == '.'))
			return false;
		if (!alnum && (i == 0 || i == n - 1))
			return false;
	}
	return true;
}

/* API server UIDs are UUIDs, kubelet's static pod UIDs hex hashes. */
static bool valid_uid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > UID_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-'))
			return false;
	}
	return true;
}

/* The string at @outer.@inner: 1 when present, 0 when absent, negative errno when not a string. */
static int member_str(struct json_object *item, const char *outer, const char *inner,
		      const char **ret)
{
	struct json_object *v = k8s_object_member(item, outer, inner);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v))
		return -EINVAL;
	*ret = json_object_get_string(v);
	return 1;
}

static int pod_entry(struct json_object *item, size_t i, const char *origin,
		     struct pods_entry *ret, struct cni_err *err)
{
	struct json_object *annotations = k8s_object_member(item, "metadata", "annotations");
	const char *kind = k8s_object_kind(item), *mirror = NULL;
	struct pods_entry e = { .uid = "", .mirror_uid = "" };
	char q[K8S_QUOTE_SIZE];
	int r;

	/* kubectl gives each item its kind; the API's own PodList leaves it out. */
	if (*kind && strcmp(kind, "Pod") != 0)
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: not a pod list: item %zu is a %s",
				   origin, i, k8s_quote(kind, q, sizeof(q)));
	if (!json_object_is_type(k8s_object_member(item, "metadata", NULL), json_type_object))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: item %zu: no metadata object",
				   origin, i);
	r = member_str(item, "metadata", "namespace", &e.ns);
	if (r <= 0 || !valid_dns_name(e.ns, 63, false))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "%s: item %zu: metadata.namespace is %s", origin, i,
				   r < 0 ? "not a string" : r == 0 ? "missing" : "not a valid namespace");
	r = member_str(item, "metadata", "name", &e.name);
	if (r <= 0 || !valid_dns_name(e.name, 253, true))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL, "%s: item %zu: metadata.name is %s%s",
				   origin, i,
				   r < 0 ? "not a string" : r == 0 ? "missing" : "not a valid pod name: ",
				   r > 0 ? k8s_quote(e.name, q, sizeof(q)) : "");
	r = member_str(item, "metadata", "uid", &e.uid);
	if (r < 0 || (r > 0 && *e.uid && !valid_uid(e.uid)))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "%s: item %zu (pod %s/%s): metadata.uid is not a valid UID", origin,
				   i, e.ns, e.name);
	/* Anyone may annotate a pod: a bad value only means no second UID. */
	if (member_str(annotations, MIRROR_ANNOTATION, NULL, &mirror) > 0 && valid_uid(mirror))
		e.mirror_uid = mirror;
	*ret = e;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pods_entry *x = a, *y = b;
	int c = strcmp(x->ns, y->ns);

	return c ? c : strcmp(x->name, y->name);
}

/* Validates the objects read as one pod listing and indexes them; takes @objs either way. */
static int pods_build(struct k8s_objects *objs, const char *origin, struct pods *ret,
		      struct cni_err *err)
{
	struct pods p = { .objs = *objs };
	struct json_object *root;
	const char *kind;
	int r = 0;

	*objs = (struct k8s_objects){ 0 };
	if (p.objs.n_roots != 1) {
		r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				"%s: not a pod list: %zu JSON documents, expected one List", origin,
				p.objs.n_roots);
		goto fail;
	}
	root = p.objs.roots[0];
	/* k8s_objects takes an object without "items" for one item: a Pod alone is no listing. */
	if (json_object_is_type(root, json_type_object)) {
		char q[K8S_QUOTE_SIZE];

		kind = k8s_object_kind(root);
		if (!cjson_get(root, "items")) {
			r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					"%s: not a pod list: one object%s%s, expected a List of pods",
					origin, *kind ? " of kind " : "", k8s_quote(kind, q, sizeof(q)));
			goto fail;
		}
		if (*kind && strcmp(kind, "List") != 0 && strcmp(kind, "PodList") != 0) {
			r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					"%s: not a pod list: a %s, expected a List of pods", origin,
					k8s_quote(kind, q, sizeof(q)));
			goto fail;
		}
	}
	p.v = calloc(p.objs.n_items + 1, sizeof(*p.v));
	if (!p.v) {
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < p.objs.n_items; i++) {
		r = pod_entry(p.objs.items[i], i, origin, &p.v[i], err);
		if (r < 0)
			goto fail;
	}
	p.n = p.objs.n_items;
	qsort(p.v, p.n, sizeof(*p.v), entry_cmp);
	*ret = p;
	return 0;
fail:
	pods_free(&p);
	return r;
}

int pods_parse(const char *buf, size_t len, const char *origin, struct pods *ret,
	       struct cni_err *err)
{
	struct k8s_objects objs = { 0 };
	int r = k8s_objects_parse(buf, len, origin, &objs, err);

	return r < 0 ? r : pods_build(&objs, origin, ret, err);
}

int pods_read(const char *path, struct pods *ret, struct cni_err *err)
{
	struct k8s_objects objs = { 0 };
	int r = k8s_objects_read(path, &objs, err);

	return r < 0 ? r : pods_build(&objs, strcmp(path, "-") == 0 ? "stdin" : path, ret, err);
}

void pods_free(struct pods *p)
{
	if (!p)
		return;
	k8s_objects_free(&p->objs);
	free(p->v);
	*p = (struct pods){ 0 };
}

enum pods_verdict pods_lookup(const struct pods *p, const char *ns, const char *name,
			      const char *uid, const char **ret_uid)
{
	struct pods_entry key = { .ns = ns, .name = name };
	const struct pods_entry *e = bsearch(&key, p->v, p->n, sizeof(*p->v), entry_cmp);
	const struct pods_entry *first, *end = p->v + p->n;

	if (!e)
		return PODS_ABSENT;
	first = e;
	while (first > p->v && entry_cmp(first - 1, &key) == 0)
		first--;
	if (!*uid)
		return PODS_PRESENT;
	for (e = first; e < end && entry_cmp(e, &key) == 0; e++)
		if (!*e->uid || strcmp(e->uid, uid) == 0 || strcmp(e->mirror_uid, uid) == 0)
			return PODS_PRESENT;
	if (ret_uid)
		*ret_uid = first->uid;
	return PODS_OTHER_UID;
}

bool pods_may_be_unlisted(time_t created, time_t listed_at)
{
	return created >= listed_at - 1;
}
