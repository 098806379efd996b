/* What ipam-node's parts share (private to node/): the flags, the connection, the numbers */
#pragma once

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ipam/nv-ipam/api/conn.h"
#include "ipam/nv-ipam/node/metrics.h"

/*
 * "<store-file>.owner": the lock one ipam-node holds for its life. The store file and its
 * flock cannot be it: adopting replaces the file, and a second ipam-node could lock the
 * new one before the first locks it again.
 */
#define NODE_OWNER_SUFFIX ".owner"

struct api_reflector;
struct cni_err;
struct node_flags;

struct node {
	const struct node_flags *flags;
	char *pool_file;             /* <cni-conf-dir>/node-pools.json */
	char *user_agent;
	int stop_fd;                 /* readable once the process is to stop */
	struct api_conn conn;        /* shared by every thread's client */
	struct metrics metrics;
	/* the pools: one reflector per kind (ippools, cidrpools), each on its thread */
	struct api_reflector *refl[METRICS_KINDS];
	pthread_mutex_t sync_lock;   /* one sync of the pool file at a time */
	bool sync_failed;            /* the last sync could not write: the main loop tries again */
	char **notes;                /* the refusals logged, so that each is logged once */
	size_t n_notes;
	/* the owner lock (owner.c): taken first, held until exit, never moved */
	int owner_fd;
	struct stat owner_locked;
	/* the store lock, as the reference daemon takes it: a flock on --store-file */
	int store_lock_fd;
	struct stat store_locked;
	bool store_adopted;          /* the store is ours: nv-ipam installed, handed over at stop */
};

/**
 * node_pools_start() - the reflectors of the pools of --ippools-namespace
 * @n: node
 *
 * Return: 0 on success, -ENOMEM.
 */
int node_pools_start(struct node *n);

/**
 * node_pools_sync() - write the node pool file from the pools now, when both kinds are
 *                     listed and the bytes change; each change and each new refusal logged
 * @n: node (any thread)
 */
void node_pools_sync(struct node *n);

/**
 * node_pools_retry() - node_pools_sync() unless a sync is under way (it may be a long
 *                      one): for the main thread, which must not wait behind it
 * @n: node
 */
void node_pools_retry(struct node *n);

/**
 * node_pools_ready() - whether the first sync is written
 * @n: node
 *
 * Return: true once it is.
 */
bool node_pools_ready(struct node *n);

/**
 * node_pools_stop() - release the reflectors (their threads have ended)
 * @n: node
 */
void node_pools_stop(struct node *n);

/**
 * node_cleaner_run() - the cleaner's loop: once the pools are synced, a pass every
 *                      --stale-ip-check-interval until @n->stop_fd is readable
 * @n: node
 * @c: this thread's client (a struct api_client *)
 */
void node_cleaner_run(struct node *n, void *c);

/**
 * node_store_lock() - take (or check) the store lock: a non-blocking flock on --store-file,
 *                     created when missing, as the reference node daemon takes it
 * @n: node
 * @err: why it failed
 *
 * nv-ipam writes the store file by rename when it first makes one: the lock is then on the
 * old inode, and is taken again on the new one.
 *
 * Return: 0 when held, -EWOULDBLOCK when another process holds it, -EINVAL when it is
 * not a regular file, other negative errno.
 */
int node_store_lock(struct node *n, struct cni_err *err);

/**
 * node_store_adopt() - make the store ours, under its node lock (so that the reference
 *                      daemon cannot start on it), and move the store lock to its file
 * @n: node
 *
 * A store this build cannot read is left alone and so is the nv-ipam binary (an older one
 * must not replace a newer): logged, and the rest runs. Sets @n->store_adopted once the
 * store may be ours, whatever follows: from then on a stop hands it over.
 *
 * Return: 0, or the exit status (1) after logging the failure.
 */
int node_store_adopt(struct node *n);

/**
 * node_store_handover() - at stop, the store in the reference daemon's format, for a
 *                         rollback to find
 * @n: node
 * @deadline_ms: until when (clock_mono_ms()) the node lock is waited for: an ADD under
 *               way holds it
 *
 * Nothing is done when the store was never adopted or --store-handover=false.
 *
 * Return: false when the store was ours and is not handed over (the exit status is 1).
 */
bool node_store_handover(const struct node *n, int64_t deadline_ms);

/**
 * node_owner_lock() - take the owner lock: a non-blocking flock on "<store-file>.owner",
 *                     created when missing, a regular file and no link
 * @n: node
 * @err: why it failed
 *
 * Return: 0 when held, -EWOULDBLOCK when another process holds it, other negative errno.
 */
int node_owner_lock(struct node *n, struct cni_err *err);

/**
 * node_owner_held() - whether the owner lock is still ours: taken, and its file still the
 *                     one at its path (a lock on a file someone removed guards nothing)
 * @n: node
 *
 * Return: true when it is.
 */
bool node_owner_held(const struct node *n);

/**
 * node_lock_wait() - try @take until it succeeds, fails otherwise than -EWOULDBLOCK, or
 *                    @wait_ms pass; SIGTERM or SIGINT (blocked, in @sigs) end the wait
 * @n: node
 * @take: node_owner_lock() or node_store_lock()
 * @wait_ms: how long another holder is waited for
 * @sigs: the stop signals
 * @err: why it failed (the last try's reason)
 *
 * Return: 0 when held, -ECANCELED on a stop signal, else what @take returned last.
 */
int node_lock_wait(struct node *n, int (*take)(struct node *, struct cni_err *), long wait_ms,
		   const sigset_t *sigs, struct cni_err *err);

/**
 * node_check_install() - unless --cni-skip-nv-ipam-binary-copy, whether nv-ipam and the
 *                        nv-ipam-tool beside it can be read as regular files
 * @f: flags
 * @err: code 7 naming the file
 *
 * Return: 0 when they can, negative errno.
 */
int node_check_install(const struct node_flags *f, struct cni_err *err);

/**
 * node_check_dir() - whether a directory can be written, or created where it is missing
 *                    (its nearest existing ancestor is a directory that can be written)
 * @dir: the directory (absolute)
 * @flag: the flag that names it, for the message
 * @err: code 7 naming the flag, the directory and why
 *
 * Return: 0 when it can, negative errno.
 */
int node_check_dir(const char *dir, const char *flag, struct cni_err *err);

/**
 * node_api_reach() - one answer from the API server: a list of one IPPool of
 *                    --ippools-namespace, tried again while the server cannot be reached
 *                    or answers 5xx or 429
 * @n: node (its connection and user agent set)
 * @wait_ms: how long to try
 * @sigs: the stop signals (blocked): SIGTERM or SIGINT ends the wait
 * @err: code 5 naming the server and the last failure
 *
 * A 403 or 404 is an answer (RBAC or the CRDs not there yet: the reflectors retry), and is
 * logged; a 401 is a failure (the credentials are refused).
 *
 * Return: 0 on an answer, -ECANCELED when stopped, negative errno on failure.
 */
int node_api_reach(struct node *n, long wait_ms, const sigset_t *sigs, struct cni_err *err);
