/* Connection slots of a server: shared fairly among client subnets and addresses, never all to a few */
#pragma once

#include <sys/socket.h>

struct slots;
struct slot;

/* What a server's slots did since it started (its /metrics). */
struct slots_stats {
	unsigned long open;            /* connections holding a slot now */
	unsigned long accepted;        /* given a slot */
	unsigned long refused_address; /* their address held its share already */
	unsigned long refused_full;    /* every slot taken, none fairly the newcomer's */
	unsigned long evicted;         /* closed to give their slot to a client holding fewer */
};

/**
 * slots_new() - the slots of one server
 * @limit: how many connections it holds
 * @per_address: how many of them one client address may hold
 * @ret: the slots; free them with slots_free() once no connection holds one
 *
 * Return: 0 on success, -ENOMEM.
 */
int slots_new(unsigned int limit, unsigned int per_address, struct slots **ret);

/**
 * slots_admit() - a slot for a connection just accepted, or none
 * @s: slots
 * @fd: its socket, open until slots_release()
 * @sa: the client's address
 * @len: its length
 *
 * Clients are grouped by subnet (an IPv4 /24, an IPv6 /64) and, within one, by address.
 * While slots are free every connection gets one, up to @per_address for an address. When
 * none is free, the newcomer takes the slot of the oldest connection of the address that
 * holds the most in the subnet that holds the most, if the newcomer's subnet (and, within
 * the same subnet, its address) holds fewer than that less one, or none at all; that
 * connection's socket is shut down (its server closes it as any other). So a kubelet,
 * holding none, always gets a slot, however many addresses fill the server.
 *
 * Return: the connection's slot, or NULL when it gets none: its socket is then shut down
 * (both ways, not closed).
 */
struct slot *slots_admit(struct slots *s, int fd, const struct sockaddr *sa, socklen_t len);

/**
 * slots_release() - a connection closes (before its socket is closed)
 * @s: slots
 * @c: its slot (NULL does nothing); freed
 */
void slots_release(struct slots *s, struct slot *c);

/**
 * slots_stats() - the counts so far
 * @s: slots (NULL: all zero)
 * @ret: the counts
 */
void slots_stats(struct slots *s, struct slots_stats *ret);

/**
 * slots_free() - release the slots
 * @s: slots (NULL does nothing); every slot must have been released
 */
void slots_free(struct slots *s);
