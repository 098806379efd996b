/*
 * Deadlines for a server's connections: one not done in time has its socket shut down
 *
 * libmicrohttpd's own timeout counts inactivity, which a client that sends a byte now and
 * then never reaches; nothing of the application runs while it reads a request's headers.
 * So a thread of our own shuts the socket down at the deadline, and libmicrohttpd, reading
 * the end of the stream, closes the connection on its own thread. Shutting down (never
 * closing) a socket the server still owns is what keeps this safe across threads: the
 * server closes a socket only after its close notification, which removes it from here
 * under the same lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "common/util/clock.h"
#include "ipam/nv-ipam/serve/deadline.h"

struct deadline_conn {
	struct deadline_conn *prev, *next;
	int64_t due_ms;
	int fd;
	bool listed; /* false once shut down */
};

struct deadline {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	/* Oldest deadline first: each one is span_ms from its start. */
	struct deadline_conn *head, *tail;
	int64_t span_ms;
	bool stop;
};

static void list_remove(struct deadline *d, struct deadline_conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		d->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		d->tail = c->prev;
	c->prev = c->next = NULL;
	c->listed = false;
}

/* Returns whether the list was empty: the thread then sleeps with no deadline. */
static bool list_append(struct deadline *d, struct deadline_conn *c)
{
	bool was_empty = !d->head;

	c->due_ms = clock_mono_ms() + d->span_ms;
	c->prev = d->tail;
	c->next = NULL;
	if (d->tail)
		d->tail->next = c;
	else
		d->head = c;
	d->tail = c;
	c->listed = true;
	return was_empty;
}

static void *watch(void *arg)
{
	struct deadline *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		int64_t now = clock_mono_ms();

		while (d->head && d->head->due_ms <= now) {
			struct deadline_conn *c = d->head;

			(void)shutdown(c->fd, SHUT_RDWR);
			list_remove(d, c);
		}
		if (d->head) {
			struct timespec at = { .tv_sec = d->head->due_ms / 1000,
					       .tv_nsec = (d->head->due_ms % 1000) * 1000000 };

			(void)pthread_cond_timedwait(&d->wake, &d->lock, &at);
		} else {
			(void)pthread_cond_wait(&d->wake, &d->lock);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int deadline_new(int64_t span_ms, struct deadline **ret)
{
	struct deadline *d = calloc(1, sizeof(*d));
	pthread_condattr_t attr;
	int r;

	*ret = NULL;
	if (!d)
		return -ENOMEM;
	d->span_ms = span_ms;
	/* The waits count on the clock the deadlines are taken from. */
	r = pthread_condattr_init(&attr);
	if (r == 0) {
		r = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		if (r == 0)
			r = pthread_cond_init(&d->wake, &attr);
		pthread_condattr_destroy(&attr);
	}
	if (r != 0) {
		free(d);
		return -r;
	}
	pthread_mutex_init(&d->lock, NULL);
	r = pthread_create(&d->thread, NULL, watch, d);
	if (r != 0) {
		pthread_cond_destroy(&d->wake);
		pthread_mutex_destroy(&d->lock);
		free(d);
		return -r;
	}
	*ret = d;
	return 0;
}

struct deadline_conn *deadline_add(struct deadline *d, int fd)
{
	struct deadline_conn *c = calloc(1, sizeof(*c));
	bool wake;

	if (!c) {
		(void)shutdown(fd, SHUT_RDWR);
		return NULL;
	}
	c->fd = fd;
	pthread_mutex_lock(&d->lock);
	wake = list_append(d, c);
	pthread_mutex_unlock(&d->lock);
	if (wake)
		pthread_cond_signal(&d->wake);
	return c;
}

void deadline_rearm(struct deadline *d, struct deadline_conn *c)
{
	bool wake;

	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	/* Moved to the end, the list stays in deadline order; the thread may wake early once. */
	if (c->listed) {
		list_remove(d, c);
		wake = list_append(d, c);
	} else {
		wake = false;
	}
	pthread_mutex_unlock(&d->lock);
	if (wake)
		pthread_cond_signal(&d->wake);
}

void deadline_remove(struct deadline *d, struct deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	if (c->listed)
		list_remove(d, c);
	pthread_mutex_unlock(&d->lock);
	free(c);
}

void deadline_free(struct deadline *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_mutex_unlock(&d->lock);
	pthread_cond_signal(&d->wake);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
