/* Records: what a plugin keeps on the node between an ADD and its DEL, one small file each */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cni_attachment;

/*
 * Where records live: a folder per plugin below this root, made mode 0700 when
 * missing. Under /run, since what a record describes (a device's MTU before a
 * pod took it, a sysctl's old value) does not outlive a boot. A network config
 * never chooses the folder: plugins name theirs from this root.
 */
#define RECORD_ROOT "/run/cni-rdma-plugins"

/*
 * A record's name is one to three parts, each a container ID or an interface
 * name, joined by ':'. Neither can hold ':' or '/', nor be empty, so a name
 * never holds "::": the temporary file a save writes, "<name>::tmp.<pid>", is
 * never another record's name (as "<name>.tmp.<pid>" was: the record of
 * interface "e.tmp.9" beside the temporary file of interface "e").
 */
#define RECORD_TEMP_SEP "::tmp."
/* A lock's file: "<name>::lock", neither a record nor a temporary file. */
#define RECORD_LOCK_SUFFIX "::lock"
/* NAME_MAX less the temporary suffix and its PID's digits. */
#define RECORD_NAME_MAX (255 - 6 - 10)

/*
 * A record's text opens with one line naming who wrote it and the version of
 * the body that follows, "cni-rdma-plugins <kind> state <version>\n", as the
 * plugins wrote their files before this module: their records stay readable.
 */
#define RECORD_MAGIC "cni-rdma-plugins "

/**
 * record_name() - a record's name from its parts
 * @parts: each a container ID (CNI's rule) or an interface name (the kernel's)
 * @n: their number, 1 to 3
 * @buf: output
 * @size: its size
 *
 * Return: 0 on success, -EINVAL for a part that is neither, -ENAMETOOLONG.
 */
int record_name(const char *const *parts, size_t n, char *buf, size_t size);

/**
 * record_save() - keep a record, replacing the one of that name whole or not at all
 * @dir: the plugin's folder (absolute, below RECORD_ROOT in the product)
 * @name: record_name()
 * @kind: who writes it ("tuning"), one word
 * @version: the body's format, from 1
 * @body: NUL-terminated text, as the plugin formats it
 *
 * The folder is made (mode 0700) when missing; no symbolic link may be on the
 * way from "/" and only root may change it. The text goes to "<name>::tmp.<pid>",
 * is synced, renamed over the record and the folder synced. Before that, the
 * temporary files that killed saves of records whose first part is @name's
 * left behind are removed: those whose writer's PID no process has.
 *
 * Return: 0 on success, negative errno on failure (nothing changed before the rename).
 */
int record_save(const char *dir, const char *name, const char *kind, unsigned int version,
		const char *body);

/**
 * record_note() - record_save() without its syncs: a record a node's crash may lose
 * @dir: as record_save()
 * @name: as record_save()
 * @kind: as record_save()
 * @version: as record_save()
 * @body: as record_save()
 *
 * For what is kept for GC (firewall's addresses of a container): a reader sees the
 * whole record or none, as with record_save(), but a power loss may lose it, which a
 * /run in memory loses anyway; the syncs cost milliseconds where /run is a disk.
 *
 * Return: 0 on success, negative errno on failure (nothing changed).
 */
int record_note(const char *dir, const char *name, const char *kind, unsigned int version,
		const char *body);

/**
 * record_mark() - a record that holds nothing but its name: made, or left as it is
 * @dir: the plugin's folder (made as record_save() makes it)
 * @name: record_name()
 *
 * For what only needs to be known to exist (portmap's and bandwidth's
 * "<container ID>:<network>", which GC reads back with record_sweep()): an empty
 * file is whole or absent, so no temporary file, rename or sync is needed (a sync
 * of a folder on a disk costs milliseconds; /run is memory on a node, but not on
 * every machine).
 *
 * Return: 0 on success, negative errno on failure.
 */
int record_mark(const char *dir, const char *name);

/**
 * record_load() - a record's body, and the version its first line gives
 * @dir: the plugin's folder
 * @name: record_name()
 * @kind: who must have written it
 * @max_version: the newest version the caller reads (every one from 1 up to it)
 * @max_bytes: the most the whole file may hold
 * @ret_body: malloc'ed, NUL-terminated body (without the first line), written only on success
 * @ret_version: its version, written only on success
 *
 * Return: 0 on success, -ENOENT when there is none (or no folder), -EBADMSG for a file
 * that is not such a record (another kind, a version past @max_version, a NUL byte,
 * larger than @max_bytes), negative errno otherwise.
 */
int record_load(const char *dir, const char *name, const char *kind, unsigned int max_version,
		size_t max_bytes, char **ret_body, unsigned int *ret_version);

/**
 * record_parse() - a record's text read: its body, and the version its first line gives
 * @text: the whole text, NUL-terminated; the body is moved to its start
 * @kind: who must have written it
 * @max_version: the newest version the caller reads
 * @ret_version: the version, written only on success
 *
 * Return: 0 on success (@text now holds the body), -EBADMSG when the first line is not
 * "cni-rdma-plugins <kind> state <version>" with a version from 1 to @max_version.
 */
int record_parse(char *text, const char *kind, unsigned int max_version, unsigned int *ret_version);

/**
 * record_line() - the next line of a body when it starts with a key: what follows the key
 * @p: where the body's unread part starts; moved past the line (and its newline is cut)
 *     when it matches
 * @key: what the line must start with ("" for any line)
 *
 * Bodies are lines of "<key><value>" in a fixed order, each ended by a newline.
 *
 * Return: the value (NUL-terminated, inside the body), or NULL when the line does not
 * start with @key or has no newline (nothing moved).
 */
char *record_line(char **p, const char *key);

/**
 * record_remove() - forget a record
 * @dir: the plugin's folder
 * @name: record_name()
 *
 * The temporary files killed saves of the same container left are removed too, as
 * record_save() removes them.
 *
 * Return: 0 when removed or when there was none, negative errno otherwise.
 */
int record_remove(const char *dir, const char *name);

/**
 * record_list() - the records a plugin's folder holds, by name
 * @dir: the plugin's folder
 * @cb: called with each record's name (temporary files left out); a negative return
 *      stops the walk and is returned
 * @data: for @cb
 *
 * For GC: the plugin reads each name's parts back to find what it kept for whom.
 *
 * Return: 0 (a missing folder holds none), negative errno otherwise or what @cb returned.
 */
int record_list(const char *dir, int (*cb)(const char *name, void *data), void *data);

/**
 * record_sweep() - GC of records named "<container ID>:<network>": those of a network's
 *                  containers that are not among the valid attachments
 * @dir: the plugin's folder
 * @network: the network the GC is for
 * @valid: the attachments to keep (their container IDs count)
 * @n_valid: their number
 * @cb: called with each gone container's ID, and whether a record of another network
 *      names the same container (what the plugin made may then be shared: its nftables
 *      rules carry the container ID alone); a negative return stops the sweep
 * @data: for @cb
 *
 * Each record is removed once @cb has taken what it describes; one whose @cb failed
 * stays for the next GC.
 *
 * Return: 0 on success, negative errno (or what @cb returned) otherwise.
 */
int record_sweep(const char *dir, const char *network, const struct cni_attachment *valid,
		 size_t n_valid, int (*cb)(const char *cid, bool elsewhere, void *data), void *data);

/**
 * record_lock() - hold a lock named like a record, for steps on shared state that must
 *                 not interleave between the plugin's processes
 * @dir: the plugin's folder (made as record_save() makes it)
 * @name: record_name()
 * @ret_fd: the lock's descriptor, written only on success: closing it releases the lock,
 *          and so does the process's end, killed or not
 *
 * Waits until the lock is free. The file "<name>::lock" stays for the next one.
 *
 * Return: 0 on success, negative errno on failure.
 */
int record_lock(const char *dir, const char *name, int *ret_fd);
