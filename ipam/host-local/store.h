/* host-local's store: upstream's directory of a file per address, its lock, byte for byte */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/util/ipaddr.h"

struct cni_attachment;
struct cni_err;
struct hl_range_set;

/*
 * <dataDir>/<network>/, as upstream's disk backend keeps it (so that a node moves
 * between ours and upstream's in either direction, pods live, and both can run at once):
 *   <address>            one per address held, named as Go prints it ("10.1.2.3",
 *                        "fd00::3"), mode 0600, holding "<containerID>\r\n<ifname>"
 *                        (an older upstream wrote the container ID alone)
 *   last_reserved_ip.<N> the address range set N reserved last, as text, mode 0600
 *   lock                 flock()ed exclusively around every change and lookup
 * Directories are made mode 0755, the lock 0750, as upstream makes them.
 */
#define HL_LOCK_FILE "lock"
#define HL_LAST_RESERVED_PREFIX "last_reserved_ip."

/* How long a command waits for the lock before it answers code 11 (upstream waits forever). */
#define HL_LOCK_TIMEOUT_MS 30000

struct hl_store;

/**
 * hl_store_open() - open (or make) a network's store and take its lock
 * @data_dir: the dataDir (below a state root of the node: trust.h's TRUST_STATE_ROOT)
 * @network: the network's name (one directory component)
 * @create: make what is missing (ADD); without it a missing store is no error
 * @ret: the store, NULL when it does not exist and @create is false; release with
 *       hl_store_close()
 * @err: code 7 for a dataDir the node does not allow or a store that lies in the suite's
 *       own state; code 5 when the directories or the lock cannot be made or opened;
 *       code 11 when the lock is held past HL_LOCK_TIMEOUT_MS
 *
 * The directory's files are read once, under the lock: every lookup after is on them.
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_store_open(const char *data_dir, const char *network, bool create, struct hl_store **ret,
		  struct cni_err *err);

/**
 * hl_store_close() - release the lock and what the store holds
 * @s: store, may be NULL
 */
void hl_store_close(struct hl_store *s);

/**
 * hl_store_reserve() - take an address for an attachment: its file, then last_reserved_ip.N
 * @s: store
 * @id: container ID
 * @ifname: interface
 * @ip: address
 * @set: index of the range set it is taken for
 * @ret_reserved: false when the address is held already
 * @err: code 5 when a file cannot be written
 *
 * The file appears whole or not at all (written unnamed, then linked under its name,
 * which fails when the name exists): a process killed at any instant leaves no empty
 * file. Each change is recorded for hl_store_undo(), which a caller that fails runs.
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_store_reserve(struct hl_store *s, const char *id, const char *ifname,
		     const struct ip_addr *ip, size_t set, bool *ret_reserved, struct cni_err *err);

/**
 * hl_store_last_reserved() - the address last_reserved_ip.N holds
 * @s: store
 * @set: range set index
 * @ret: the address, written only when there is one
 *
 * Return: true when the file exists and holds exactly an address (upstream's
 * net.ParseIP of its bytes), false otherwise.
 */
bool hl_store_last_reserved(struct hl_store *s, size_t set, struct ip_addr *ret);

/**
 * hl_store_owned_in() - an address an attachment holds inside a range set (upstream's GetByID)
 * @s: store
 * @id: container ID
 * @ifname: interface (a file of the older format, the container ID alone, counts too)
 * @set: range set
 * @ret: the first such address by file name
 *
 * Return: true when there is one.
 */
bool hl_store_owned_in(const struct hl_store *s, const char *id, const char *ifname,
		       const struct hl_range_set *set, struct ip_addr *ret);

/**
 * hl_store_find() - whether any file holds an attachment (upstream's FindByID, for CHECK)
 * @s: store
 * @id: container ID
 * @ifname: interface; without a file of this form, one of the container ID alone counts
 *
 * Return: true when one does.
 */
bool hl_store_find(const struct hl_store *s, const char *id, const char *ifname);

/**
 * hl_store_release() - remove the files of an attachment, as upstream's DEL does
 * @s: store
 * @id: container ID
 * @ifname: interface
 * @n_sets: the number of range sets of the config (upstream releases once per set: from
 *          the second on, files of the container ID alone go too)
 * @ret_n: how many files were removed
 * @err: code 5 when a file cannot be removed
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_store_release(struct hl_store *s, const char *id, const char *ifname, size_t n_sets,
		     size_t *ret_n, struct cni_err *err);

/**
 * hl_store_gc() - remove the address files no valid attachment holds
 * @s: store
 * @valid: the attachments the runtime keeps
 * @n_valid: their number
 * @ret_n: how many files were removed
 * @err: code 5 when a file cannot be removed
 *
 * A file of the container ID alone stays while any valid attachment has that ID; an
 * empty one (what an upstream ADD killed between creating and writing it leaves) goes;
 * one holding anything else stays.
 *
 * Return: 0 on success, negative errno on failure.
 */
int hl_store_gc(struct hl_store *s, const struct cni_attachment *valid, size_t n_valid,
		size_t *ret_n, struct cni_err *err);

/**
 * hl_store_count_in() - how many addresses of a range set are held
 * @s: store
 * @set: range set
 *
 * Return: the number of address files whose address the set holds.
 */
size_t hl_store_count_in(const struct hl_store *s, const struct hl_range_set *set);

/**
 * hl_store_undo() - take back what hl_store_reserve() did since the store was opened
 * @s: store
 *
 * The files made are removed and each last_reserved_ip.N gets its old content back (or
 * goes, when there was none); failures are logged.
 */
void hl_store_undo(struct hl_store *s);
