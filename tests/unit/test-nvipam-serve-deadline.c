/*
 * Unit tests: the HTTP servers' connection deadlines: a socket is shut down at its deadline,
 * not before, however the others fare; a rearm gives it the span again; a removed one is
 * left alone
 */
#include <poll.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
	assert_false(ended_within(sv[1], 120));
	assert_true(ended_within(sv[1], 2000));
	assert_in_range(clock_mono_ms() - t0, 190, 1500);
	/* The watched end is shut down, not closed: its owner still closes it. */
	assert_int_equal(send(sv[0], "x", 1, MSG_NOSIGNAL), -1);
	deadline_remove(d, c);
	deadline_free(d);
	close_pair(sv);
}

static void test_order(void **state)
{
	struct deadline *d;
	struct deadline_conn *first, *second;
	int a[2], b[2];

	(void)state;
	pair(a);
	pair(b);
	assert_int_equal(deadline_new(300, &d), 0);
	first = deadline_add(d, a[0]);
	usleep(150 * 1000);
	second = deadline_add(d, b[0]);
	assert_true(ended_within(a[1], 2000));
	/* The second one started 150 ms later: it still has about that long. */
	assert_false(ended_within(b[1], 50));
	assert_true(ended_within(b[1], 2000));
	deadline_remove(d, second);
	deadline_remove(d, first);
	deadline_free(d);
	close_pair(a);
	close_pair(b);
}

static void test_rearm(void **state)
{
	struct deadline *d;
	struct deadline_conn *c;
	int sv[2];

	(void)state;
	pair(sv);
	assert_int_equal(deadline_new(300, &d), 0);
	c = deadline_add(d, sv[0]);
	/* Rearmed every 150 ms, it outlives its span twice over. */
	for (int i = 0; i < 4; i++) {
		assert_false(ended_within(sv[1], 150));
		deadline_rearm(d, c);
	}
	assert_true(ended_within(sv[1], 2000));
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
