/* Reading whole files and descriptors with a size bound */
#pragma once

#include <stddef.h>

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
