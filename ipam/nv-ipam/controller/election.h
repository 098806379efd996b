/* Leader election on a coordination.k8s.io Lease, as controller-runtime's managers elect theirs */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct api_client;
struct json_object;

/* The reference's lease: its name, and controller-runtime's timings (seconds). */
#define ELECTION_LEASE_NAME "dd1643cf.nvidia.com"
#define ELECTION_LEASE_DURATION_S 15
#define ELECTION_RENEW_DEADLINE_S 10
#define ELECTION_RETRY_PERIOD_S 2

/* A Lease's spec as the election reads and writes it. */
struct lease_record {
	char holder[256];       /* spec.holderIdentity, "" when released */
	long duration_s;        /* spec.leaseDurationSeconds */
	char acquire_time[40];  /* spec.acquireTime (MicroTime) */
	char renew_time[40];    /* spec.renewTime */
	long transitions;       /* spec.leaseTransitions */
	char resource_version[32];
};

/* What one round of the election does next. */
enum election_action {
	ELECTION_WAIT,   /* another holds a lease still valid */
	ELECTION_CREATE, /* no lease yet: create it, holding it */
	ELECTION_UPDATE, /* write @next (taking over, or renewing our own) */
};

/* The election's memory between rounds: the lease as last seen, and when it last changed. */
struct election_seen {
	char raw[600];          /* the record as last read, in a form compared whole */
	int64_t changed_ms;     /* monotonic time when it was first read so */
	long duration_s;        /* its leaseDurationSeconds */
	char holder[256];
};

/**
 * election_decide() - one round of controller-runtime's (client-go's) election, without I/O
 * @got: the lease read, NULL when there is none
 * @seen: the memory between rounds (zeroed at first), updated
 * @me: this replica's identity
 * @lease_s: our lease duration
 * @now_ms: monotonic time now (milliseconds)
 * @now_text: the wall time now as a MicroTime ("2024-06-14T10:00:00.123456Z")
 * @next: the record to write for ELECTION_CREATE and ELECTION_UPDATE
 *
 * Another's lease is valid for its leaseDurationSeconds from the moment this replica saw it
 * change (its own clock: no clock is compared across machines); a released lease (no holder)
 * or one that stopped changing is taken over (transitions + 1). Our own is renewed, its
 * acquireTime kept.
 *
 * Return: the action.
 */
enum election_action election_decide(const struct lease_record *got, struct election_seen *seen,
				     const char *me, long lease_s, int64_t now_ms,
				     const char *now_text, struct lease_record *next);

/**
 * election_lease_parse() - a Lease object's record
 * @lease: the object
 * @ret: filled (absent members empty or 0)
 *
 * Return: 0, or -EINVAL when it is no Lease (no spec, a member of the wrong type).
 */
int election_lease_parse(struct json_object *lease, struct lease_record *ret);

/**
 * election_lease_json() - a Lease object to create or update
 * @rec: its record (with resource_version for an update)
 * @ns: namespace
 * @name: name
 * @ret: the object
 *
 * Return: 0, or -ENOMEM.
 */
int election_lease_json(const struct lease_record *rec, const char *ns, const char *name,
			struct json_object **ret);

/* ---- the running election ---- */

struct election;

struct election_config {
	const char *ns;         /* --leader-elect-namespace */
	const char *name;       /* ELECTION_LEASE_NAME */
	const char *identity;   /* hostname_uuid, as controller-runtime names its replicas */
	long lease_s;
	long renew_deadline_s;
	long retry_s;
	/* Called from the election's thread when this replica starts or stops leading. */
	void (*changed)(void *ctx, bool leading);
	/* Called when the lease was released at the stop. */
	void (*released)(void *ctx);
	/* Why a round failed (the API unreachable or refusing), for the log; the election logs nothing. */
	void (*note)(void *ctx, const char *msg);
	void *ctx;
};

/**
 * election_new() - an election, not yet running
 * @cfg: settings (copied; the strings must outlive the election)
 * @stop_fd: readable when the process stops
 * @ret: the election; release with election_free()
 *
 * Return: 0, or -ENOMEM.
 */
int election_new(const struct election_config *cfg, int stop_fd, struct election **ret);

/**
 * election_run() - take part until @stop_fd becomes readable
 * @e: election
 * @c: a client for this thread only, not ended by @stop_fd (the release follows the stop;
 *     each request is bounded in time instead)
 *
 * A candidate tries every retry period (a tenth of jitter) and just after the lease it saw
 * expires; the leader renews every retry period and stops leading when no renewal
 * succeeded within the renew deadline. At the stop the
 * leader releases the lease (no holder, duration 1 s) so that the other replica takes over
 * at once, as controller-runtime does with LeaderElectionReleaseOnCancel.
 */
void election_run(struct election *e, struct api_client *c);

/**
 * election_leading() - whether this replica may write now
 * @e: election (any thread)
 *
 * True from the first successful acquisition until the renew deadline after the last
 * successful renewal began: a leader cut off from the API stops writing then, before any
 * other replica can find the lease expired (lease duration > renew deadline).
 *
 * Return: true while leading.
 */
bool election_leading(struct election *e);

/**
 * election_stats() - counters for metrics
 * @e: election (any thread)
 * @ret_transitions: times this replica started leading
 * @ret_failures: rounds that failed (the API unreachable, a conflict)
 */
void election_stats(struct election *e, unsigned long *ret_transitions, unsigned long *ret_failures);

/**
 * election_free() - release an election (its run must have returned)
 * @e: election (NULL does nothing)
 */
void election_free(struct election *e);

/* A host name's bytes kept in an identity (Linux's HOST_NAME_MAX); "_" and a UUID follow. */
#define ELECTION_IDENTITY_HOST_MAX 64
/* An identity's length at most: within an Event's reportingInstance (128) too. */
#define ELECTION_IDENTITY_MAX (ELECTION_IDENTITY_HOST_MAX + 1 + 36)

/**
 * election_identity_make() - "hostname_uuid" from a host name and 16 random bytes
 * @host: the host name: any bytes, of which the first ELECTION_IDENTITY_HOST_MAX are used
 * @uuid: 16 random bytes, written as a version 4 UUID
 * @buf: output
 * @size: its size (at least ELECTION_IDENTITY_MAX + 1)
 *
 * Every byte of @host that is not part of valid UTF-8, and every control character (C0,
 * DEL, C1), becomes one '_': the API server stores a string's invalid bytes as U+FFFD, and
 * a holder that reads back another identity than its own loses its lease at each renewal.
 * The same host name always gives the same text; a valid one is kept as it is.
 *
 * Return: 0, or -ENOSPC when @size is too small.
 */
int election_identity_make(const char *host, const unsigned char uuid[16], char *buf, size_t size);

/**
 * election_identity() - this replica's identity: its host name and a random UUID
 * @buf: output
 * @size: its size (at least ELECTION_IDENTITY_MAX + 1)
 *
 * As election_identity_make(), with gethostname() ("ipam-controller" when it fails) and
 * fresh randomness: the form controller-runtime gives its replicas.
 *
 * Return: 0, -ENOSPC, or a negative errno (no randomness).
 */
int election_identity(char *buf, size_t size);
