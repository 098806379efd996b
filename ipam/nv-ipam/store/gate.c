/* Who may allocate from the store: the handover marker, the reference daemon's socket and lock, the takeover's record */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/log.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/gate.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/private.h"

#define MARKER_MAX_BYTES 4096

void store_handover_marker_name(const struct nvipam_store *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s" STORE_HANDOVER_SUFFIX, s->name);
}

uint32_t store_handover_marker_sum(const char *data)
{
	const char *line = strstr(data, "\nchecksum ");
	unsigned long long v;

	if (line && sscanf(line, "\nchecksum %llu", &v) == 1 && v <= UINT32_MAX)
		return (uint32_t)v;
	return 0;
}

bool store_handover_marker(const struct nvipam_store *s, uint32_t *ret_sum)
{
	char at[RFC3339_STRLEN];

	return store_handover_marker_read(s, ret_sum, at);
}

/* The store's directory as a path, for messages: @path up to its last "/". */
static int dir_len(const struct nvipam_store *s)
{
	const char *slash = strrchr(s->path, '/');

	return slash ? (int)(slash - s->path) : 1;
}

int store_handover_daemon(const struct nvipam_store *s, struct cni_err *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -errno, "cannot make a socket: %s",
				   strerror(errno));
	/* Through the directory already opened: no path game between the check and the connect. */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/" STORE_HANDOVER_DAEMON_SOCKET,
		 s->dir_fd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN ||
	    errno == EINPROGRESS)
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "the reference nv-ipam node daemon answers on %.*s/"
				   STORE_HANDOVER_DAEMON_SOCKET ": nv-ipam takes its store %s over "
				   "once it has stopped", dir_len(s), s->path, s->path);
	/* Refused (a socket left by a daemon that is gone), missing, or not a socket. */
	return 0;
}

/* The daemon's lock: a flock on the store file, kept by @s until close. */
static int lock_file(struct nvipam_store *s, struct cni_err *err)
{
	_cleanup_close_ int fd = openat(s->dir_fd, s->name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat now, held;

	if (fd < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot open store file %s: %s", s->path,
				   strerror(errno));
	if (fstat(fd, &now) < 0)
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot read store file %s: %s", s->path,
				   strerror(errno));
	/* Read again after the node lock changed hands: the same file is locked already. */
	if (s->file_lock_fd >= 0 && fstat(s->file_lock_fd, &held) == 0 && held.st_dev == now.st_dev &&
	    held.st_ino == now.st_ino)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
					   "another process holds the lock on the reference store file "
					   "%s (the reference nv-ipam node daemon, or ipam-node about to "
					   "take the store over): try again", s->path);
		return cni_err_set(err, CNI_ERR_IO, -errno, "cannot lock store file %s: %s", s->path,
				   strerror(errno));
	}
	if (s->file_lock_fd >= 0)
		(void)close(s->file_lock_fd);
	s->file_lock_fd = TAKE_FD(fd);
	return 0;
}

int store_handover_gate(struct nvipam_store *s, enum store_file_kind kind, struct cni_err *err)
{
	uint32_t sum;
	int r;

	if (store_handover_marker(s, &sum))
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "store %s was handed over to the reference nv-ipam node daemon "
				   "(%s" STORE_HANDOVER_SUFFIX " is there, written by ipam-node at its "
				   "stop or by nv-ipam-tool handover): ipam-node's start or "
				   "`nv-ipam-tool adopt` takes it back", s->path, s->path);
	if (kind != STORE_FILE_REFERENCE)
		return 0;
	/* Only under the exclusive node lock: nv-ipam processes sharing it would lock each other out. */
	r = s->whole ? lock_file(s, err) : 0;
	return r < 0 ? r : store_handover_daemon(s, err);
}

static void record_name(const struct nvipam_store *s, char *buf, size_t len)
{
	snprintf(buf, len, "%s" STORE_ADOPTED_SUFFIX, s->name);
}

bool store_handover_recorded(const struct nvipam_store *s)
{
	char name[NAME_MAX + 1];

	record_name(s, name, sizeof(name));
	return faccessat(s->dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int store_handover_record(struct nvipam_store *s, struct cni_err *err)
{
	char name[NAME_MAX + 1];
	const char *step = "";
	int r;

	if (!s->adopted)
		return 0;
	record_name(s, name, sizeof(name));
	/*
	 * Synced, its name not: the store file is replaced next in the same directory
	 * (store_commit_file()), and that directory fsync makes this rename durable too
	 * before anything relies on it. A power loss before it leaves the daemon's file and
	 * the marker, and the adoption is done again (tests/crash finds no state that
	 * needs more).
	 */
	r = file_replace_at(s->dir_fd, name, s->adopted, s->adopted_len, 0600, &step);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write %s" STORE_ADOPTED_SUFFIX ": %s: %s",
				   s->path, step, strerror(-r));
	free(s->adopted);
	s->adopted = NULL;
	s->adopted_len = 0;
	return 0;
}

void store_handover_record_read(struct nvipam_store *s, struct store_legacy *ret)
{
	_cleanup_free_ char *data = NULL;
	enum store_file_kind kind = STORE_FILE_NONE;
	struct cni_err why = { 0 };
	char name[NAME_MAX + 1];
	const char *what = NULL;
	size_t len = 0;
	int r;

	record_name(s, name, sizeof(name));
	r = file_read_at(s->dir_fd, name, STORE_DISK_MAX_BYTES, &data, &len);
	if (r < 0)
		what = strerror(-r);
	else if (store_migrate_read(data, len, &kind, ret, &why) < 0)
		what = why.msg;
	else if (kind != STORE_FILE_REFERENCE)
		what = "not the reference daemon's format";
	if (!what)
		return;
	store_migrate_free(ret);
	log_warning("store %s: %s" STORE_ADOPTED_SUFFIX " cannot be read (%s): every entry of the "
		    "reference store file is taken as the daemon's", s->path, s->path, what);
}

void store_handover_marker_at(const char *data, char ret_at[RFC3339_STRLEN])
{
	const char *line = strstr(data, "\nat ");
	char when[64];
	time_t t;

	ret_at[0] = '\0';
	/* Written again from the parsed time: the marker's bytes never reach a terminal. */
	if (line && sscanf(line, "\nat %63s", when) == 1 && rfc3339_parse(when, &t) == 0)
		rfc3339_format(t, ret_at);
}

bool store_handover_marker_read(const struct nvipam_store *s, uint32_t *ret_sum,
				char ret_at[RFC3339_STRLEN])
{
	_cleanup_free_ char *data = NULL;
	char name[NAME_MAX + 1];
	size_t len;
	int r;

	*ret_sum = 0;
	ret_at[0] = '\0';
	store_handover_marker_name(s, name, sizeof(name));
	r = file_read_at(s->dir_fd, name, MARKER_MAX_BYTES, &data, &len);
	if (r == -ENOENT)
		return false;
	/* One that cannot be read still says the daemon may have the store: no checksum. */
	if (r < 0)
		return true;
	*ret_sum = store_handover_marker_sum(data);
	store_handover_marker_at(data, ret_at);
	return true;
}

int store_handover_release(struct nvipam_store *s, const char *container_id, const char *ifname,
			   size_t *ret_n, struct cni_err *err)
{
	_cleanup_free_ char *data = NULL;
	struct cni_err why = { 0 };
	struct text_buf doc = { 0 };
	uint32_t sum;
	size_t len = 0, n = 0;
	int r;

	*ret_n = 0;
	/* Exclusive: ipam-node cannot take the store back, nor another DEL edit it, meanwhile. */
	store_disk_unlock_node(s);
	r = store_disk_lock_node(s, true, err);
	if (r < 0)
		return r;
	if (!store_handover_marker(s, &sum))
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "store %s was taken back from the reference nv-ipam node daemon "
				   "meanwhile: try again", s->path);
	/* The daemon's own lock, for the whole read-modify-write: no daemon starts on it meanwhile. */
	r = lock_file(s, err);
	if (r >= 0)
		r = store_handover_daemon(s, err);
	if (r >= 0)
		r = store_disk_read_file(s, &data, &len, err);
	if (r < 0)
		return r;
	r = store_migrate_release(data, len, container_id, ifname, &doc, &n, &why);
	if (r == -ENODATA)
		/* A handover killed before it replaced our store file: the pool logs hold it. */
		return cni_err_set(err, CNI_ERR_TRY_AGAIN, -EBUSY,
				   "store %s was being handed over to the reference nv-ipam node "
				   "daemon (%s" STORE_HANDOVER_SUFFIX " is there) and its file is not "
				   "in the daemon's format: ipam-node takes it back when it starts",
				   s->path, s->path);
	if (r < 0) {
		text_buf_free(&doc);
		return cni_err_set(err, why.code, r, "store file %s: %s", s->path, why.msg);
	}
	/*
	 * The marker keeps the checksum of what was handed over: ipam-node then sees a file
	 * changed since and migrates it whole, pool logs replaced, the address gone from both.
	 */
	if (n)
		r = store_disk_write_file(s, doc.data, doc.len, err);
	text_buf_free(&doc);
	/* A DEL killed before its rename left its temporary file: ours to remove, under both locks. */
	store_disk_sweep(s);
	if (r < 0)
		return r;
	log_info("store %s is handed over and no reference nv-ipam node daemon has it: %zu "
		 "entr%s of %s/%s released in its file", s->path, n, n == 1 ? "y" : "ies",
		 container_id, ifname);
	*ret_n = n;
	return 0;
}
