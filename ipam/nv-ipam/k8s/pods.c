/* The node's pod listing (kubectl get pods -o json, or the API's): which pods the API has */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/liststream.h"
#include "ipam/nv-ipam/k8s/pods.h"

/* Where kubelet keeps a static pod's own UID on its mirror pod in the API. */
#define MIRROR_ANNOTATION "kubernetes.io/config.mirror"
#define UID_MAX_LEN 128
#define STRINGS_CHUNK (64u * 1024u)
#define READ_CHUNK (64u * 1024u)

/* Where the kept strings live: chunks that never move, freed together. */
struct pods_strings {
	struct pods_strings *next;
	size_t used;
	size_t cap;
	char data[];
};

static const char *strings_add(struct pods_strings **head, const char *s)
{
	size_t n = strlen(s) + 1;
	struct pods_strings *c = *head;
	char *out;

	if (n == 1)
		return "";
	if (!c || c->cap - c->used < n) {
		size_t cap = n > STRINGS_CHUNK ? n : STRINGS_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = *head;
		c->used = 0;
		c->cap = cap;
		*head = c;
	}
	out = c->data + c->used;
	memcpy(out, s, n);
	c->used += n;
	return out;
}

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
	struct pods_entry e = { .uid = "", .mirror_uid = "", .node = "" };
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
	/* The scheduler binds a pod to a node by its name, a DNS subdomain. */
	r = member_str(item, "spec", "nodeName", &e.node);
	if (r < 0 || (r > 0 && *e.node && !valid_dns_name(e.node, 253, true)))
		return cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
				   "%s: item %zu (pod %s/%s): spec.nodeName is not a valid node name",
				   origin, i, e.ns, e.name);
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

struct reader {
	struct pods *p;
	const char *origin;
};

/* One item: checked, and its strings copied out of the JSON tree (which then goes). */
static int pod_item(void *ctx, struct json_object *item, size_t index, struct cni_err *err)
{
	struct reader *rd = ctx;
	struct pods *p = rd->p;
	struct pods_entry e;
	int r = pod_entry(item, index, rd->origin, &e, err);

	if (r < 0)
		return r;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct pods_entry *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		p->v = v;
		p->cap = cap;
	}
	e.ns = strings_add(&p->strings, e.ns);
	e.name = strings_add(&p->strings, e.name);
	e.uid = strings_add(&p->strings, e.uid);
	e.mirror_uid = strings_add(&p->strings, e.mirror_uid);
	e.node = strings_add(&p->strings, e.node);
	if (!e.ns || !e.name || !e.uid || !e.mirror_uid || !e.node)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	p->v[p->n++] = e;
	return 0;
}

int pods_reader_new(const char *origin, struct pods *p, struct liststream **ret)
{
	struct reader *rd = malloc(sizeof(*rd));
	int r;

	if (!rd)
		return -ENOMEM;
	*rd = (struct reader){ .p = p, .origin = origin };
	r = liststream_new(origin, pod_item, rd, ret);
	if (r < 0)
		free(rd);
	return r;
}

static struct reader *reader_of(struct liststream *ls)
{
	return liststream_ctx(ls);
}

int pods_reader_end(struct liststream *ls, const char *origin, struct cni_err *err)
{
	const char *kind;
	char q[K8S_QUOTE_SIZE];
	int r = liststream_end(ls, err);

	if (r >= 0 && liststream_is_list(ls)) {
		kind = liststream_string(ls, "kind");
		/* One object without "items" (a Pod alone) is no listing of the node. */
		if (!liststream_has_items(ls))
			r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					"%s: not a pod list: one object%s%s, expected a List of pods",
					origin, *kind ? " of kind " : "", k8s_quote(kind, q, sizeof(q)));
		else if (*kind && strcmp(kind, "List") != 0 && strcmp(kind, "PodList") != 0)
			r = cni_err_set(err, CNI_ERR_DECODE, -EINVAL,
					"%s: not a pod list: a %s, expected a List of pods", origin,
					k8s_quote(kind, q, sizeof(q)));
	}
	free(reader_of(ls));
	liststream_free(ls);
	return r;
}

void pods_reader_free(struct liststream *ls)
{
	if (!ls)
		return;
	free(reader_of(ls));
	liststream_free(ls);
}

void pods_sort(struct pods *p)
{
	if (p->n)
		qsort(p->v, p->n, sizeof(*p->v), entry_cmp);
}

int pods_parse(const char *buf, size_t len, const char *origin, struct pods *ret,
	       struct cni_err *err)
{
	struct pods p = { 0 };
	struct liststream *ls = NULL;
	int r;

	if (pods_reader_new(origin, &p, &ls) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	r = liststream_feed(ls, buf, len, err);
	if (r < 0)
		pods_reader_free(ls);
	else
		r = pods_reader_end(ls, origin, err);
	if (r < 0) {
		pods_free(&p);
		return r;
	}
	pods_sort(&p);
	*ret = p;
	return 0;
}

int pods_read(const char *path, struct pods *ret, struct cni_err *err)
{
	const bool std = strcmp(path, "-") == 0;
	const char *origin = std ? "stdin" : path;
	_cleanup_close_ int own = -1;
	_cleanup_free_ char *buf = malloc(READ_CHUNK);
	struct liststream *ls = NULL;
	struct pods p = { 0 };
	struct stat st;
	int fd = STDIN_FILENO, r = 0;

	if (!buf)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (!std) {
		/* Looked at before reading: a FIFO or a device could block or never end. */
		own = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (own < 0 || fstat(own, &st) < 0)
			return cni_err_set(err, CNI_ERR_IO, -errno, "cannot read %s: %s", path,
					   strerror(errno));
		if (!S_ISREG(st.st_mode))
			return cni_err_set(err, CNI_ERR_IO, -EINVAL, "cannot read %s: not a regular file",
					   path);
		fd = own;
	}
	if (pods_reader_new(origin, &p, &ls) < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (;;) {
		ssize_t n = read(fd, buf, READ_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = cni_err_set(err, CNI_ERR_IO, -errno, "cannot read %s: %s", origin,
					strerror(errno));
			break;
		}
		if (n == 0)
			break;
		r = liststream_feed(ls, buf, (size_t)n, err);
		if (r < 0)
			break;
	}
	if (r < 0)
		pods_reader_free(ls);
	else
		r = pods_reader_end(ls, origin, err);
	if (r < 0) {
		pods_free(&p);
		return r;
	}
	pods_sort(&p);
	*ret = p;
	return 0;
}

void pods_free(struct pods *p)
{
	if (!p)
		return;
	while (p->strings) {
		struct pods_strings *next = p->strings->next;

		free(p->strings);
		p->strings = next;
	}
	free(p->v);
	*p = (struct pods){ 0 };
}

size_t pods_on_node(const struct pods *p, const char *node)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += strcmp(p->v[i].node, node) == 0;
	return n;
}

enum pods_verdict pods_lookup(const struct pods *p, const char *ns, const char *name,
			      const char *uid, const char **ret_uid)
{
	struct pods_entry key = { .ns = ns, .name = name };
	const struct pods_entry *e = p->n ? bsearch(&key, p->v, p->n, sizeof(*p->v), entry_cmp) : NULL;
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
