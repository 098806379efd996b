/* Atomic installation of one binary into a CNI bin directory */
#pragma once

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* What follows a name in its temporary files: file_write_atomic()'s "<name>.tmp.<pid>". */
#define INSTALL_TMP_TAG ".tmp."

/* Largest binary accepted. */
#define INSTALL_MAX_SIZE (256u * 1024 * 1024)

enum install_outcome {
	INSTALL_COPIED,    /* the target was missing or differed, and is now the source */
	INSTALL_UNCHANGED, /* the target already was a regular file with the source's bytes and mode */
};

/**
 * install_lock() - open the target directory and take the installers' lock on it,
 *                  waiting only while no stop signal is pending
 * @dir: target directory (must exist)
 * @stop: signals that end the wait (blocked by the caller)
 * @on_wait: called once when the lock is held by another process, with @dir
 * @ret_fd: directory descriptor, locked; the lock goes with close()
 *
 * Installers sharing a host directory (two DaemonSets on a node) run one
 * after the other; a temporary file found while holding the lock belongs to
 * an installer that died. The lock is tried every 100 ms so that SIGTERM (which
 * the caller keeps blocked until the copies are done) still ends a wait.
 *
 * Return: 0 on success, -EINTR when a stop signal came (it stays pending), -ENOTDIR,
 * negative errno otherwise.
 */
int install_lock(const char *dir, const sigset_t *stop, void (*on_wait)(const char *dir),
		 int *ret_fd);

/**
 * install_sweep() - remove the temporary files a killed installer left for one binary
 * @dirfd: the locked target directory
 * @name: binary name
 *
 * Return: number of files removed, negative errno on failure.
 */
int install_sweep(int dirfd, const char *name);

/**
 * install_binary() - put a copy of @src into @dir under @name, atomically
 * @dir: the target directory, locked with install_lock()
 * @name: file name in it (no '/')
 * @src: source file (regular, at most INSTALL_MAX_SIZE bytes)
 * @ret: what was done, written on success
 * @ret_size: bytes of the binary, written on success
 * @ret_step: on failure, the step that failed ("read source", "compare", then
 *            file_write_atomic()'s)
 *
 * file_write_atomic() does the copy: a temporary file in the target
 * directory with the source's permission bits, fsynced, renamed over @name,
 * the directory fsynced. A reader sees the old binary or the new one, never
 * part of one. Its temporary name depends on the PID, which two containers
 * can share: the lock keeps installers apart. A target with the same bytes
 * and mode is left alone.
 *
 * Return: 0 on success, negative errno on failure (the target is untouched).
 */
int install_binary(const char *dir, const char *name, const char *src, enum install_outcome *ret,
		   size_t *ret_size, const char **ret_step);
