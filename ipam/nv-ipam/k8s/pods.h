/* The node's pod listing (kubectl get pods -o json): which pods the API has */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ipam/nv-ipam/k8s/k8s.h"

struct cni_err;

/* One listed pod; the strings point into the JSON trees of struct pods. */
struct pods_entry {
	const char *ns;
	const char *name;
	const char *uid;        /* "" when the listing gives none */
	const char *mirror_uid; /* a mirror pod's static pod UID, the one the runtime saw; else "" */
};

struct pods {
	struct k8s_objects objs;
	struct pods_entry *v; /* sorted by namespace, then name */
	size_t n;
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
 *       metadata.namespace and metadata.name (DNS label, DNS subdomain), an invalid UID
 *
 * The listing is API data: every string kept is validated, so it is safe to print. A
 * mirror pod's "kubernetes.io/config.mirror" annotation that is not a valid UID is ignored.
 *
 * Return: 0 on success, negative errno on failure.
 */
int pods_parse(const char *buf, size_t len, const char *origin, struct pods *ret,
	       struct cni_err *err);

/**
 * pods_read() - pods_parse() on a file
 * @path: file, or "-" for stdin
 * @ret: pods, written only on success
 * @err: code 5 when unreadable, 6 as pods_parse()
 *
 * Return: 0 on success, negative errno on failure.
 */
int pods_read(const char *path, struct pods *ret, struct cni_err *err);

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
