/* sysctl under /proc/sys, following the caller's netns */
#pragma once

/**
 * sysctl_write() - write a value to /proc/sys/<path>
 * @path: slash-separated, e.g. "net/ipv4/conf/eth0/arp_notify"
 * @value: text to write
 *
 * Return: 0 on success, negative errno on failure.
 */
int sysctl_write(const char *path, const char *value);

/**
 * sysctl_read() - read a value from /proc/sys/<path>, trailing newline removed
 * @path: slash-separated
 * @buf: output
 * @len: size of @buf
 *
 * Return: 0 on success, negative errno on failure.
 */
int sysctl_read(const char *path, char *buf, unsigned long len);
