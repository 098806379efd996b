/* The node's pod listing (kubectl get pods -o json, or the API's): which pods the API has */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ipam/nv-ipam/k8s/k8s.h"

struct cni_err;
struct liststream;

/* One listed pod; the strings live in the listing's own memory (struct pods). */
struct pods_entry {
	const char *ns;
	const char *name;
	const char *uid;        /* "" when the listing gives none */
	const char *mirror_uid; /* a mirror pod's static pod UID, the one the runtime saw; else "" */
	const char *node;       /* spec.nodeName, "" when the pod is not bound */
};

struct pods_strings;

/*
 * A listing as the few strings gc needs per pod: it is read as a stream (liststream.h),
 * one pod at a time, so its memory is a small part of the listing's size.
 */
struct pods {
	struct pods_entry *v; /* sorted by namespace, then name */
	size_t n;
	size_t cap;
	struct pods_strings *strings;
};

enum pods_verdict {
	PODS_PRESENT,   /* listed with the recorded UID (or either side has none) */
	PODS_ABSENT,    /* no pod of that namespace/name */
	PODS_OTHER_UID, /* listed, but with another UID: a new pod of the same name */
};

/**
 * pods_parse() - a pod listing: one List (kind "List" or "PodList") or one array of pods
 * @buf: text (need not be NUL-terminated)
 * @len: its length
 * @origin: input name for messages
 * @ret: pods, written only on success; release with pods_free()
 * @err: code 6 naming @origin on malformed JSON or anything that is not a pod list: a single
 *       object, several documents, another kind of List or item, a pod without a valid
 *       metadata.namespace and metadata.name (DNS label, DNS subdomain), an invalid UID or
 *       spec.nodeName
 *
 * The listing is API data: every string kept is validated, so it is safe to print. A
 * mirror pod's "kubernetes.io/config.mirror" annotation that is not a valid UID is ignored.
 *
 * Return: 0 on success, negative errno on failure.
 */
int pods_parse(const char *buf, size_t len, const char *origin, struct pods *ret,
	       struct cni_err *err);

/**
 * pods_read() - pods_parse() on a file, read a piece at a time
 * @path: file, or "-" for stdin (a regular file otherwise: a FIFO or a device is refused)
 * @ret: pods, written only on success
 * @err: code 5 when unreadable, 6 as pods_parse()
 *
 * Return: 0 on success, negative errno on failure.
 */
int pods_read(const char *path, struct pods *ret, struct cni_err *err);

/**
 * pods_reader_new() - a listing read as it arrives (from the API, a page at a time)
 * @origin: input name for messages
 * @p: the pods so far (zeroed to start; each document adds its pods to it)
 * @ret: the reader of one document, written only on success; feed it with
 *       liststream_feed(), finish it with pods_reader_end()
 *
 * Return: 0 on success, -ENOMEM.
 */
int pods_reader_new(const char *origin, struct pods *p, struct liststream **ret);

/**
 * pods_reader_end() - the document is complete: check it is a pod list, free the reader
 * @ls: the reader (freed)
 * @origin: input name for messages
 * @err: code 6 as pods_parse()
 *
 * Return: 0 on success, negative errno on failure.
 */
int pods_reader_end(struct liststream *ls, const char *origin, struct cni_err *err);

/**
 * pods_reader_free() - drop a reader whose document will not be completed
 * @ls: the reader (freed; the pods it added stay in their struct pods)
 */
void pods_reader_free(struct liststream *ls);

/**
 * pods_sort() - put the pods in lookup order, once every document is read
 * @p: pods
 */
void pods_sort(struct pods *p);

/**
 * pods_on_node() - how many listed pods are bound to a node
 * @p: pods
 * @node: node name
 *
 * Return: the count.
 */
size_t pods_on_node(const struct pods *p, const char *node);

/**
 * pods_free() - release a listing and zero it
 * @p: listing
 */
void pods_free(struct pods *p);

/**
 * pods_lookup() - whether the pod an allocation records is in the listing
 * @p: listing
 * @ns: recorded namespace
 * @name: recorded name
 * @uid: recorded UID, "" when none was recorded
 * @ret_uid: for PODS_OTHER_UID, the listed pod's UID (NULL to ignore)
 *
 * A pod listed twice (which the API never does) is present when either matches.
 *
 * Return: the verdict.
 */
enum pods_verdict pods_lookup(const struct pods *p, const char *ns, const char *name,
			      const char *uid, const char **ret_uid);

/**
 * pods_may_be_unlisted() - whether an allocation may be newer than a listing: its pod
 *                          may be missing from it without being gone
 * @created: the allocation's creation time (nv-ipam's whole seconds)
 * @listed_at: when the listing was started (whole seconds of date +%s, taken before kubectl)
 *
 * An allocation made before the listing started belongs to a pod bound to this node by
 * then, which the listing holds unless it was deleted. nv-ipam's time() may run a clock
 * tick behind the clock date(1) reads, so one second of margin is kept.
 *
 * Return: true when the allocation must not count as missed.
 */
bool pods_may_be_unlisted(time_t created, time_t listed_at);
