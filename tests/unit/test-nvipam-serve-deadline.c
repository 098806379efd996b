/*
 * Unit tests: the HTTP servers' connection deadlines: a socket is shut down at its deadline,
 * not before, however the others fare; a rearm gives it the span again; a removed one is
 * left alone. A load can only delay what the client sees: each end is checked to come no
 * sooner than its deadline, and waited for with a hang guard only.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/util/clock.h"
#include "ipam/nv-ipam/serve/deadline.h"

/* A connected pair: [0] is watched, [1] is the client that sees the shutdown. */
static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* Whether the client end reads the end of the stream within @ms. */
static bool ended_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&p, 1, ms) != 1)
		return false;
	return read(fd, &c, 1) == 0;
}

/* What no shutdown here needs: only a shutdown that never comes reaches it. */
#define HANG_GUARD_MS 10000

/* When (clock_mono_ms()) the client end saw the end of the stream. */
static int64_t ended_at(int fd)
{
	if (!ended_within(fd, HANG_GUARD_MS))
		fail_msg("not shut down in %d ms (a hang guard)", HANG_GUARD_MS);
	return clock_mono_ms();
}

static void close_pair(int sv[2])
{
	close(sv[0]);
	close(sv[1]);
}

static void test_expires(void **state)
{
	struct deadline *d;
	struct deadline_conn *c;
	int sv[2];
	int64_t t0;

	(void)state;
	pair(sv);
	assert_int_equal(deadline_new(200, &d), 0);
	t0 = clock_mono_ms();
	c = deadline_add(d, sv[0]);
	assert_non_null(c);
	assert_true(ended_at(sv[1]) - t0 >= 200);
	/* The watched end is shut down, not closed: its owner still closes it. */
	assert_int_equal(send(sv[0], "x", 1, MSG_NOSIGNAL), -1);
	deadline_remove(d, c);
	deadline_free(d);
	close_pair(sv);
}

/* Each connection has its own span from its start: the later one ends no sooner than its own. */
static void test_order(void **state)
{
	struct deadline *d;
	struct deadline_conn *first, *second;
	int a[2], b[2];
	int64_t t_first, t_second;

	(void)state;
	pair(a);
	pair(b);
	assert_int_equal(deadline_new(300, &d), 0);
	t_first = clock_mono_ms();
	first = deadline_add(d, a[0]);
	usleep(150 * 1000);
	t_second = clock_mono_ms();
	second = deadline_add(d, b[0]);
	assert_true(ended_at(a[1]) - t_first >= 300);
	assert_true(ended_at(b[1]) - t_second >= 300);
	deadline_remove(d, second);
	deadline_remove(d, first);
	deadline_free(d);
	close_pair(a);
	close_pair(b);
}

/*
 * A rearm gives the span again: the end comes no sooner than a span after the last rearm
 * made while the connection was open (seen open after it). Rearmed every 150 ms, four
 * times, it outlives its span twice over, unless a stalled machine lets it end between
 * two rearms; then the rearms before the end are the ones that count.
 */
static void test_rearm(void **state)
{
	struct deadline *d;
	struct deadline_conn *c;
	int sv[2];
	int64_t last;
	int rearms = 0;

	(void)state;
	pair(sv);
	assert_int_equal(deadline_new(300, &d), 0);
	last = clock_mono_ms();
	c = deadline_add(d, sv[0]);
	for (int i = 0; i < 4; i++) {
		int64_t t;

		usleep(150 * 1000);
		t = clock_mono_ms();
		deadline_rearm(d, c);
		if (ended_within(sv[1], 0))
			break;
		last = t;
		rearms++;
	}
	printf("# %d of 4 rearms came before the end\n", rearms);
	assert_true(ended_at(sv[1]) - last >= 300);
	/* Once shut down, a rearm does not bring it back to the list (nor crash). */
	deadline_rearm(d, c);
	deadline_remove(d, c);
	deadline_free(d);
	close_pair(sv);
}

static void test_removed(void **state)
{
	struct deadline *d;
	struct deadline_conn *c;
	int sv[2];

	(void)state;
	pair(sv);
	assert_int_equal(deadline_new(100, &d), 0);
	c = deadline_add(d, sv[0]);
	deadline_remove(d, c);
	assert_false(ended_within(sv[1], 300));
	deadline_remove(d, NULL);
	deadline_rearm(d, NULL);
	deadline_free(d);
	deadline_free(NULL);
	close_pair(sv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expires),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_rearm),
		cmocka_unit_test(test_removed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
