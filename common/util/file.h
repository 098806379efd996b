/* Files: bounded reads of whole files and descriptors, atomic replacement */
#pragma once

#include <dirent.h>
#include <stddef.h>
#include <sys/types.h>

/**
 * file_read_fd() - read a descriptor to its end
 * @fd: descriptor
 * @max: most bytes accepted
 * @ret: malloc'ed, NUL-terminated contents, written only on success
 * @ret_len: number of bytes read (without the terminator)
 *
 * Return: 0 on success, -EFBIG when there is more than @max, negative errno otherwise.
 */
int file_read_fd(int fd, size_t max, char **ret, size_t *ret_len);

/**
 * file_read() - read a regular file whole
 * @path: file
 * @max: most bytes accepted
 * @ret: malloc'ed, NUL-terminated contents, written only on success
 * @ret_len: number of bytes read (without the terminator)
 *
 * FIFOs, devices and the like are refused rather than read: they could block
 * or never end.
 *
 * Return: 0 on success, -ENOENT when missing, -EISDIR for a directory, -EINVAL
 * for another non-regular file, -EFBIG when larger than @max, negative errno otherwise.
 */
int file_read(const char *path, size_t max, char **ret, size_t *ret_len);

/**
 * file_read_at() - file_read() of a file in a directory, without following a symbolic link
 * @dirfd: directory
 * @name: file name in it (one component)
 * @max: most bytes accepted
 * @ret: malloc'ed, NUL-terminated contents, written only on success
 * @ret_len: number of bytes read (without the terminator)
 *
 * Return: as file_read(), and -ELOOP for a symbolic link.
 */
int file_read_at(int dirfd, const char *name, size_t max, char **ret, size_t *ret_len);

/**
 * file_open_beneath() - open a regular file below a directory, no symbolic link on the way
 * @root_fd: the directory the path is relative to
 * @rel: relative path ("a/b/log"), no "." or ".." component, no leading '/'
 * @flags: open(2) flags for the file (O_CREAT allowed); O_NOFOLLOW, O_NONBLOCK,
 *         O_NOCTTY and O_CLOEXEC are added
 * @mode: mode of a file O_CREAT creates
 * @ret_fd: descriptor, written only on success
 *
 * Every directory on the way is opened with O_NOFOLLOW; an existing file is
 * looked at (without opening it) before it is opened, so a FIFO or a device is
 * refused without the side effects of an open, and checked again once open.
 *
 * Return: 0 on success, -ELOOP when a component is a symbolic link, -EISDIR for
 * a directory, -EINVAL for another non-regular file or a bad @rel, -ENOENT
 * when a directory on the way is missing, negative errno otherwise.
 */
int file_open_beneath(int root_fd, const char *rel, int flags, mode_t mode, int *ret_fd);

/**
 * file_open_marked_beneath() - open for appending a file below a directory that starts
 *                              with a mark, creating it (holding the mark) when missing
 * @root_fd: the directory the path is relative to
 * @rel: relative path, as for file_open_beneath()
 * @mark: what the file's first bytes must be (at most 256); a new file is created
 *        holding it before it has a name, so no reader sees it unmarked
 * @mode: mode of a new file
 * @ret_fd: descriptor (appending), written only on success
 *
 * Return: 0 on success, -EPERM for an existing file that does not start with @mark,
 * otherwise as file_open_beneath().
 */
int file_open_marked_beneath(int root_fd, const char *rel, const char *mark, mode_t mode,
			     int *ret_fd);

/**
 * file_dir_open_beneath() - open (and create) a directory below a directory, no symbolic link on the way
 * @root_fd: the directory the path is relative to
 * @rel: relative path, as for file_open_beneath(); "" is @root_fd itself
 * @create_mode: mode of the directories created when missing; 0 creates none
 * @ret_fd: descriptor (O_DIRECTORY), written only on success
 *
 * Return: 0 on success, -ELOOP for a symbolic link, -ENOTDIR for something that
 * is not a directory, -ENOENT when missing and not created, negative errno otherwise.
 */
int file_dir_open_beneath(int root_fd, const char *rel, mode_t create_mode, int *ret_fd);

/**
 * file_dir_check_private() - whether only root can change what a directory holds
 * @dirfd: directory
 *
 * As sshd's StrictModes: owned by root (or by the user running us, for tests
 * without privileges) and writable by neither group nor others.
 *
 * Return: 0 when it is, -EPERM when it is not, negative errno when it cannot be told.
 */
int file_dir_check_private(int dirfd);

/**
 * file_make_parents() - create the missing directories above a file (mkdir -p of its dirname)
 * @path: file
 * @mode: permissions of the directories created
 *
 * Return: 0 on success, negative errno on failure.
 */
int file_make_parents(const char *path, mode_t mode);

/**
 * file_replace_at() - file_write_atomic_at() without the directory's fsync
 * @dirfd: directory
 * @name: file name in it (one component)
 * @data: new contents
 * @len: their length
 * @mode: permissions of the new file, whatever the umask
 * @ret_step: on failure, the step that failed ("create" to "rename")
 *
 * For a caller that syncs the directory itself before it relies on the new name (a
 * later replacement in the same directory whose fsync covers this rename too).
 *
 * Return: 0 on success, negative errno on failure.
 */
int file_replace_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
		    const char **ret_step);

/**
 * file_write_atomic_at() - file_write_atomic() of a file in a directory
 * @dirfd: directory
 * @name: file name in it (one component)
 * @data: new contents
 * @len: their length
 * @mode: permissions of the new file, whatever the umask
 * @ret_step: on failure, the step that failed (as file_write_atomic())
 *
 * The temporary file is created with O_EXCL|O_NOFOLLOW and everything is
 * relative to @dirfd, so a symbolic link anywhere cannot redirect the write.
 *
 * Return: 0 on success, negative errno on failure.
 */
int file_write_atomic_at(int dirfd, const char *name, const void *data, size_t len, mode_t mode,
			 const char **ret_step);

/**
 * file_write_atomic_via() - file_write_atomic_at() through a temporary name the caller chose
 * @dirfd: directory
 * @name: file name in it (one component)
 * @tmp: the temporary file's name in it (one component, not @name): for callers whose
 *       files are named so that "<name>.tmp.<pid>" could be another of their files
 * @data: new contents
 * @len: their length
 * @mode: permissions of the new file, whatever the umask
 * @ret_step: on failure, the step that failed (as file_write_atomic())
 *
 * Return: 0 on success, negative errno on failure.
 */
int file_write_atomic_via(int dirfd, const char *name, const char *tmp, const void *data,
			  size_t len, mode_t mode, const char **ret_step);

/**
 * file_write_atomic() - replace a file so that readers see the old or the new contents
 * @path: file
 * @data: new contents
 * @len: their length
 * @mode: permissions of the new file, whatever the umask
 * @ret_step: on failure, the step that failed: "create", "write", "sync",
 *            "close", "rename" or "sync directory"
 *
 * Writes "<path>.tmp.<pid>" (replacing a stale one of that name), fsyncs it,
 * renames it over @path and fsyncs the directory. A failure before the
 * rename removes the temporary file and leaves @path as it was; a failure of
 * "sync directory" comes after the new contents are in place.
 *
 * Return: 0 on success, negative errno on failure.
 */
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		      const char **ret_step);

/**
 * file_pwrite_all() - write all of @data at @off, whatever the kernel takes per call
 * @fd: file
 * @data: bytes
 * @len: their number
 * @off: where in the file
 *
 * Return: 0 on success, negative errno on failure (part may be written).
 */
int file_pwrite_all(int fd, const void *data, size_t len, off_t off);

/**
 * file_dir_stream() - a readdir() stream of a directory, from its first entry
 * @dirfd: the directory (left as it was: the stream reads a duplicate)
 *
 * Return: the stream, to closedir(); NULL with errno set on failure.
 */
DIR *file_dir_stream(int dirfd);

/**
 * file_sweep_temps_at() - remove the temporary files killed writers left behind with
 *                         file_write_atomic_at(): every "<name>.tmp.<digits>" in a
 *                         directory
 * @dirfd: the directory
 * @name: the file's name in it; NULL: every file's ("*.tmp.<digits>"; a name with
 *        nothing but digits after its last ".tmp.")
 *
 * Only for a caller that holds whatever lock serialises the writers of @name: a live
 * writer's temporary file would go too.
 */
void file_sweep_temps_at(int dirfd, const char *name);

/**
 * file_sweep_temps_of() - file_sweep_temps_at() of several names, in one pass over the
 *                         directory
 * @dirfd: the directory
 * @names: the files' names in it
 * @n: their number (at least 1)
 *
 * Only for a caller that holds whatever lock serialises the writers of all of @names.
 */
void file_sweep_temps_of(int dirfd, const char *const *names, size_t n);
