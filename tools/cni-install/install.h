/* Atomic installation of one binary into a CNI bin directory */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Prefix of the temporary files, after the dot and the binary's name: ".macvlan.cni-install-XXXXXX". */
#define INSTALL_TMP_TAG ".cni-install-"

enum install_outcome {
	INSTALL_COPIED,    /* the target was missing or differed, and is now the source */
	INSTALL_UNCHANGED, /* the target already was a regular file with the source's bytes and mode */
};

/**
 * install_lock() - open the target directory and take the installers' lock on it
 * @dir: target directory (must exist)
 * @ret_fd: directory descriptor, locked; the lock goes with close()
 *
 * Installers sharing a host directory (two DaemonSets on a node) run one
 * after the other; a temporary file found while holding the lock belongs to
 * an installer that died.
 *
 * Return: 0 on success, -ENOTDIR, negative errno otherwise.
 */
int install_lock(const char *dir, int *ret_fd);

/**
 * install_sweep() - remove the temporary files a killed installer left for one binary
 * @dirfd: the locked target directory
 * @name: binary name
 *
 * Return: number of files removed, negative errno on failure.
 */
int install_sweep(int dirfd, const char *name);

/**
 * install_binary() - put a copy of @src into @dirfd under @name, atomically
 * @dirfd: the locked target directory
 * @name: file name in it (no '/')
 * @src: source file
 * @ret: what was done, written on success
 * @ret_size: bytes of the binary, written on success
 * @ret_step: on failure, the step that failed ("open source", "create", "write", ...)
 *
 * The copy goes to a new temporary file in the target directory, gets the
 * source's permission bits, is fsynced and renamed over @name; the directory
 * is fsynced. A reader sees the old binary or the new one, never part of one.
 * A target with the same bytes and mode is left alone.
 *
 * Return: 0 on success, negative errno on failure (the target is untouched).
 */
int install_binary(int dirfd, const char *name, const char *src, enum install_outcome *ret,
		   off_t *ret_size, const char **ret_step);
