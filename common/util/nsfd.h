/* Network namespaces by descriptor: open and validate a path, enter and always return */
#pragma once

#include <stdbool.h>

/**
 * nsfd_open() - open and validate a netns path (nsfs or procfs)
 * @path: e.g. /var/run/netns/x or /proc/<pid>/ns/net
 * @ret_fd: descriptor, written only on success
 *
 * The path is looked at before it is opened, and opened without blocking.
 *
 * Return: 0 on success, -ENOENT when the path is gone, -EINVAL when it is a
 * regular file but no namespace (what a netns bind mount leaves behind once
 * unmounted), -EMEDIUMTYPE when it is a namespace of another kind or not a
 * regular file at all (a FIFO, a device, a directory), negative errno otherwise.
 */
int nsfd_open(const char *path, int *ret_fd);

/**
 * nsfd_is_current() - whether a netns descriptor is the caller's netns
 * @fd: netns descriptor
 *
 * Return: 1 when it is, 0 when not, negative errno on failure.
 */
int nsfd_is_current(int fd);

/**
 * nsfd_run() - run a function inside a netns and come back
 * @fd: target netns
 * @fn: function to run; its return value is passed through
 * @userdata: argument for @fn
 *
 * The caller is back in its original netns when this returns, whatever @fn
 * returned. A failure to return is fatal for a CNI plugin and aborts.
 *
 * Return: what @fn returned, or negative errno when the netns cannot be entered.
 */
int nsfd_run(int fd, int (*fn)(void *userdata), void *userdata);

/**
 * nsfd_new() - a new, empty netns held only by a descriptor
 * @ret_fd: descriptor, written only on success
 *
 * The caller stays in its netns. Nothing names the new netns: it disappears
 * when the last descriptor is closed (the kernel then returns physical devices
 * in it to the initial netns), so no exit path can leave it behind.
 *
 * Return: 0 on success, negative errno on failure.
 */
int nsfd_new(int *ret_fd);

/**
 * nsfd_open_current() - a descriptor of the caller's own netns
 * @ret_fd: descriptor, written only on success
 *
 * Return: 0 on success, negative errno on failure.
 */
int nsfd_open_current(int *ret_fd);
