/* A DHCP client's packet socket on one interface of the current netns */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct dhcp_sock {
	int fd;
	int ifindex;
	uint8_t mac[6];
};

/**
 * dhcp_sock_open() - a packet socket on @ifname, the link set up when it is down
 * @ifname: interface in the calling thread's netns
 * @ret: socket, written only on success (close ret->fd)
 *
 * Return: 0, -ENODEV when there is no such interface, or negative errno.
 */
int dhcp_sock_open(const char *ifname, struct dhcp_sock *ret);

/**
 * dhcp_sock_send() - a DHCP message from port 68 to port 67, in an Ethernet broadcast
 * @s: socket
 * @src: IPv4 source, network order (0 before a lease)
 * @dst: IPv4 destination, network order
 * @payload: the DHCP message
 * @len: its length
 *
 * Return: 0, or negative errno.
 */
int dhcp_sock_send(const struct dhcp_sock *s, uint32_t src, uint32_t dst, const uint8_t *payload,
		   size_t len);

/**
 * dhcp_sock_recv() - the next UDP payload to port 68, within a wait
 * @s: socket
 * @wake_fd: a descriptor whose readability ends the wait early (-1 for none)
 * @timeout_ms: the longest wait
 * @buf: output
 * @size: its size
 * @ret_len: the payload's length
 *
 * IPv4 headers and UDP lengths are checked; other traffic is skipped.
 *
 * Return: 0, -ETIMEDOUT, -EINTR when @wake_fd became readable, or negative errno.
 */
int dhcp_sock_recv(const struct dhcp_sock *s, int wake_fd, int timeout_ms, uint8_t *buf,
		   size_t size, size_t *ret_len);

/**
 * dhcp_sock_link_exists() - whether the interface is still there
 * @s: socket
 *
 * Return: 1, 0 when gone, negative errno when that cannot be told.
 */
int dhcp_sock_link_exists(const struct dhcp_sock *s);

/**
 * dhcp_sock_link_down() - set the interface down (a lease expired)
 * @s: socket
 *
 * Return: 0, or negative errno.
 */
int dhcp_sock_link_down(const struct dhcp_sock *s);
