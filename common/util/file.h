/* Files: bounded reads of whole files and descriptors, atomic replacement */
#pragma once

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
 * file_make_parents() - create the missing directories above a file (mkdir -p of its dirname)
 * @path: file
 * @mode: permissions of the directories created
 *
 * Return: 0 on success, negative errno on failure.
 */
int file_make_parents(const char *path, mode_t mode);

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
 * file_sweep_temps() - remove the temporary files killed writers left behind with
 *                      file_write_atomic(): every "<path>.tmp.*"
 * @path: file
 *
 * Only for a caller that holds whatever lock serialises the writers of @path: a live
 * writer's temporary file would go too.
 */
void file_sweep_temps(const char *path);
