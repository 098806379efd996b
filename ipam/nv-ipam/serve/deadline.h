/* Deadlines for a server's connections: one not done in time has its socket shut down */
#pragma once

#include <stdint.h>

struct deadline;
struct deadline_conn;

/**
 * deadline_new() - a watcher of connections' deadlines, with a thread of its own
 * @span_ms: how long a connection gets from deadline_add() or deadline_rearm() on
 * @ret: the watcher; free it with deadline_free() once no connection is watched
 *
 * Every deadline is @span_ms from its start, so they expire in the order they started:
 * the thread sleeps until the oldest one, however many connections are watched.
 *
 * Return: 0 on success, negative errno on failure.
 */
int deadline_new(int64_t span_ms, struct deadline **ret);

/**
 * deadline_add() - watch a connection's socket from now on
 * @d: watcher
 * @fd: the connection's socket, which must stay open until deadline_remove()
 *
 * A socket not done by its deadline is shut down (both ways, not closed): its server reads
 * the end of the stream and closes the connection as it closes any other.
 *
 * Return: the watched connection, NULL when out of memory (the socket is then shut down
 * at once: a connection that cannot be bounded is not served).
 */
struct deadline_conn *deadline_add(struct deadline *d, int fd);

/**
 * deadline_rearm() - start the connection's deadline again (its next request begins)
 * @d: watcher
 * @c: a connection of deadline_add() (NULL does nothing); one already shut down stays so
 */
void deadline_rearm(struct deadline *d, struct deadline_conn *c);

/**
 * deadline_remove() - stop watching, before the socket is closed
 * @d: watcher
 * @c: a connection of deadline_add() (NULL does nothing); freed
 */
void deadline_remove(struct deadline *d, struct deadline_conn *c);

/**
 * deadline_free() - stop the thread and release the watcher
 * @d: watcher (NULL does nothing); every connection must have been removed
 */
void deadline_free(struct deadline *d);
