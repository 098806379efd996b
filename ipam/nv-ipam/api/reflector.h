/* One collection of the API mirrored in memory: list, then watch from the list's version */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct api_client;
struct json_object;

/*
 * What the reflector tells its owner, for logs and metrics (it logs nothing itself). The
 * failures (LIST_FAILED, EXPIRED, WATCH_FAILED, BAD_EVENT) are each followed by a backoff:
 * their @msg ends with it, " (next try in N ms)".
 */
enum api_reflector_note {
	API_NOTE_LISTED,        /* a list replaced the objects (@msg: how many) */
	API_NOTE_ABSENT,        /* the collection is not served (404: its CRD is not installed) */
	API_NOTE_LIST_FAILED,   /* a list failed (@msg says why; a 404 keeping the objects listed
				 * before too); retried after a backoff */
	API_NOTE_EXPIRED,       /* the watch's version is gone (410): listing again */
	API_NOTE_WATCH_FAILED,  /* a watch could not start or broke off (@msg says why) */
	API_NOTE_BAD_EVENT,     /* an event did not parse (@msg says why): listing again */
};

struct api_reflector_config {
	const char *resource;    /* "ippools", for messages */
	const char *path;        /* the collection: "/apis/GROUP/VERSION/namespaces/NS/ippools" */
	const char *query;       /* extra parameters, escaped ("fieldSelector=..."); NULL: none */
	long page_size;          /* items per list page (limit=); 0: 500 */
	long watch_timeout_s;    /* each watch's timeoutSeconds; 0: 300 to 600, at random */
	long absent_retry_s;     /* how often a collection not served is looked at again; 0: 30 */
	/*
	 * After the objects changed: once after each list, once per batch of events that
	 * arrived together. Called from the reflector's thread, without its lock held.
	 */
	void (*changed)(void *ctx);
	void (*note)(void *ctx, enum api_reflector_note what, const char *msg);
	/*
	 * What is kept of each object listed or watched (called from the reflector's thread,
	 * without its lock), NULL for all of it: a new object
	 * in *@ret (or a new reference), or -ENOMEM. A controller that reads a few fields of
	 * thousands of Nodes keeps those, not their status.
	 */
	int (*trim)(void *ctx, struct json_object *obj, struct json_object **ret);
	/*
	 * Applied to the text of each object listed and each event watched before it is
	 * parsed, NULL for none: 1 with a shorter text in *@ret (malloc'd) of which @trim
	 * keeps what it keeps of the whole, 0 to parse the text as it is, or -ENOMEM. What a
	 * node keeps of a pool's status is one entry; parsed whole, it is a tree of megabytes.
	 */
	int (*skim)(void *ctx, const char *text, size_t len, char **ret, size_t *ret_len);
	/*
	 * Held while a response is parsed and trimmed, NULL for none: reflectors that share
	 * one build their json-c trees one at a time, so that the peak memory is that of the
	 * largest object, not of one per reflector (a pool status of 10,000 nodes is ~10 MB
	 * as a tree).
	 */
	pthread_mutex_t *parse_lock;
	void *ctx;
};

/* Counters, for metrics and readiness. */
struct api_reflector_stats {
	bool synced;              /* listed at least once (or found not served) */
	bool absent;              /* the last list found the collection not served */
	unsigned long lists;      /* lists that completed */
	unsigned long restarts;   /* watches that broke off, failed to start or ended at once */
	unsigned long expired;    /* relists forced by a 410 */
	unsigned long events;     /* events applied */
	time_t last_list;         /* CLOCK_REALTIME of the last list that completed */
};

struct api_reflector;

/**
 * api_reflector_new() - a mirror of one collection
 * @cfg: what to mirror (copied; the strings must outlive the reflector)
 * @stop_fd: the descriptor that ends api_reflector_run() when readable (as the client's)
 * @ret: the reflector, written only on success; release with api_reflector_free()
 *
 * Return: 0 on success, -ENOMEM.
 */
int api_reflector_new(const struct api_reflector_config *cfg, int stop_fd,
		      struct api_reflector **ret);

/**
 * api_reflector_run() - list and watch until @stop_fd becomes readable
 * @r: reflector
 * @c: a client for this thread only
 *
 * Lists in pages, then watches from the list's resourceVersion with bookmarks; a watch
 * that ends at its timeout is started again from the last version seen; a 410 (the
 * version is gone) or an event that does not parse lists again. Every failure waits a
 * backoff (0.5 s doubling to 16 s) before the next request: a watch that could not start,
 * broke off, ended within a second with no change (a bookmark is none) or forced a list,
 * and a list that failed. The backoff starts over after a watch that delivered a change
 * or stayed open a minute, never after a list alone. A 404 on the first list, or on one
 * after a previous 404 left the collection empty, counts as an empty collection, looked
 * at again every @absent_retry_s; a 404 after a list succeeded keeps the objects (a
 * failure, noted) until a list succeeds, for 300 s at most, then counts as empty too.
 */
void api_reflector_run(struct api_reflector *r, struct api_client *c);

/**
 * api_reflector_snapshot() - copies of the objects now, sorted by namespace/name
 * @r: reflector (any thread)
 * @ret: malloc'ed array of copies the caller owns (api_objects_free()), written only on
 *       success
 * @ret_n: how many
 *
 * Return: 0 on success, -ENOMEM.
 */
int api_reflector_snapshot(struct api_reflector *r, struct json_object ***ret, size_t *ret_n);

/**
 * api_reflector_stats() - the counters now
 * @r: reflector (any thread)
 * @ret: filled
 */
void api_reflector_stats(struct api_reflector *r, struct api_reflector_stats *ret);

/**
 * api_reflector_free() - release a reflector (its run must have returned)
 * @r: reflector (NULL does nothing)
 */
void api_reflector_free(struct api_reflector *r);

/**
 * api_objects_free() - release what api_reflector_snapshot() gave
 * @v: the array
 * @n: its length
 */
void api_objects_free(struct json_object **v, size_t n);
