/* Events on the pools, as client-go's recorder posts them: repeats counted, a burst limited */
#pragma once

#include <stddef.h>

struct api_client;
struct cni_err;
struct json_object;

struct events;

/**
 * events_new() - a recorder
 * @identity: this replica (the Events' reportingInstance)
 * @ret: the recorder; release with events_free()
 *
 * Return: 0, or -ENOMEM.
 */
int events_new(const char *identity, struct events **ret);

/**
 * events_emit() - an Event about a pool
 * @ev: recorder (one thread)
 * @c: client
 * @obj: the pool (kind, metadata.namespace, name, uid, resourceVersion)
 * @component: "IPPoolController" or "CIDRPoolController", the reference's sources
 * @type: "Warning" or "Normal"
 * @reason: "NoFreeRanges", "NoFreePrefixes", "InvalidSpec"
 * @message: what happened
 * @err: why the API refused it
 *
 * The same Event again (object, reason, message) within ten minutes is a PATCH of its count
 * and lastTimestamp, not a new object; each pool may have 25 Events at once, then one per
 * five minutes (client-go's spam filter): a thousand nodes without a block give the API
 * 25 writes, not a thousand per reconcile.
 *
 * Return: 0 when written, 1 when held back by the limit, negative errno on failure.
 */
int events_emit(struct events *ev, struct api_client *c, struct json_object *obj,
		const char *component, const char *type, const char *reason, const char *message,
		struct cni_err *err);

/**
 * events_free() - release a recorder
 * @ev: recorder (NULL does nothing)
 */
void events_free(struct events *ev);
