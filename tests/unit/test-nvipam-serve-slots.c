/*
 * Unit tests: the HTTP servers' connection slots: every connection gets one while some are
 * free, an address only its share; a full server gives the newcomer the oldest slot of the
 * heaviest subnet's heaviest address when the newcomer holds at least two fewer (or none),
 * never to an equal holder; subnets are IPv4 /24s and IPv6 /64s, an IPv4 client of a
 * dual-stack socket counted as IPv4. Counts only: which socket was shut down, the stats.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "ipam/nv-ipam/serve/slots.h"

#define MAX_CONNS 64

/* A connection: its server end (given to the slots) and the client end that sees a shutdown. */
struct conn {
	int sv[2];
	struct slot *slot;
};

static struct conn conns[MAX_CONNS];
static size_t n_conns;

static struct sockaddr_storage addr_of(const char *text)
{
	struct sockaddr_storage ss = { 0 };

	if (strchr(text, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, text, &s6->sin6_addr), 1);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, text, &s4->sin_addr), 1);
	}
	return ss;
}

/* A new connection from @text; its index in conns[]. */
static size_t connect_from(struct slots *s, const char *text)
{
	struct sockaddr_storage ss = addr_of(text);
	struct conn *c;

	assert_true(n_conns < MAX_CONNS);
	c = &conns[n_conns];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->sv), 0);
	assert_int_equal(fcntl(c->sv[1], F_SETFL, O_NONBLOCK), 0);
	c->slot = slots_admit(s, c->sv[0], (struct sockaddr *)&ss,
			      ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						       : sizeof(struct sockaddr_in));
	return n_conns++;
}

/* Whether the connection's socket was shut down (its client end reads the end at once). */
static bool shut(size_t i)
{
	char c;

	return read(conns[i].sv[1], &c, 1) == 0;
}

static void close_all(struct slots *s)
{
	for (size_t i = 0; i < n_conns; i++) {
		slots_release(s, conns[i].slot);
		close(conns[i].sv[0]);
		close(conns[i].sv[1]);
	}
	n_conns = 0;
	slots_free(s);
}

static struct slots_stats stats(struct slots *s)
{
	struct slots_stats st;

	slots_stats(s, &st);
	return st;
}

static void test_free_slots_and_address_share(void **state)
{
	struct slots *s;
	size_t i;

	(void)state;
	assert_int_equal(slots_new(8, 3, &s), 0);
	for (int k = 0; k < 3; k++) {
		i = connect_from(s, "10.0.0.1");
		assert_non_null(conns[i].slot);
		assert_false(shut(i));
	}
	/* The address's fourth: its share is three, however many slots are free. */
	i = connect_from(s, "10.0.0.1");
	assert_null(conns[i].slot);
	assert_true(shut(i));
	i = connect_from(s, "10.0.0.2");
	assert_non_null(conns[i].slot);
	assert_int_equal(stats(s).open, 4);
	assert_int_equal(stats(s).accepted, 4);
	assert_int_equal(stats(s).refused_address, 1);
	assert_int_equal(stats(s).refused_full, 0);
	/* A slot released is free again. */
	slots_release(s, conns[0].slot);
	conns[0].slot = NULL;
	i = connect_from(s, "10.0.0.1");
	assert_non_null(conns[i].slot);
	assert_int_equal(stats(s).open, 4);
	close_all(s);
}

/* Four addresses of four subnets fill the server; a fifth, holding none, gets a slot. */
static void test_newcomer_evicts_heaviest_oldest(void **state)
{
	static const char *const attackers[] = { "10.1.0.1", "10.2.0.1", "10.3.0.1", "10.4.0.1" };
	struct slots *s;
	size_t i, first_of_heaviest;

	(void)state;
	assert_int_equal(slots_new(8, 4, &s), 0);
	for (int k = 0; k < 2; k++)
		for (int a = 0; a < 4; a++)
			connect_from(s, attackers[a]);
	/* 10.3.0.1 one more: the heaviest. Its first connection is index 2. */
	slots_release(s, conns[0].slot);
	conns[0].slot = NULL;
	i = connect_from(s, "10.3.0.1");
	assert_non_null(conns[i].slot);
	first_of_heaviest = 2;
	assert_int_equal(stats(s).open, 8);

	i = connect_from(s, "192.168.7.9");
	assert_non_null(conns[i].slot);
	assert_false(shut(i));
	assert_true(shut(first_of_heaviest));
	for (size_t k = 0; k < n_conns; k++)
		if (k != first_of_heaviest)
			assert_false(shut(k));
	assert_int_equal(stats(s).evicted, 1);
	assert_int_equal(stats(s).open, 8);

	/* The evicted one back at once: 10.3.0.1 holds 2 now, as many as the heaviest. */
	i = connect_from(s, "10.3.0.1");
	assert_null(conns[i].slot);
	assert_true(shut(i));
	assert_int_equal(stats(s).refused_full, 1);
	assert_int_equal(stats(s).evicted, 1);
	/* Released after its eviction: counted once. */
	slots_release(s, conns[first_of_heaviest].slot);
	conns[first_of_heaviest].slot = NULL;
	assert_int_equal(stats(s).open, 8);
	close_all(s);
}

/* A holder one fewer than the heaviest never takes a slot from it: no churn among them. */
static void test_equal_holders_refused(void **state)
{
	struct slots *s;
	size_t i;

	(void)state;
	assert_int_equal(slots_new(7, 7, &s), 0);
	for (int k = 0; k < 4; k++)
		connect_from(s, "10.1.0.1");
	for (int k = 0; k < 3; k++)
		connect_from(s, "10.2.0.1");
	/* 10.2.0.1 holds 3 against 4, 10.1.0.1 is the heaviest itself: both refused. */
	i = connect_from(s, "10.2.0.1");
	assert_null(conns[i].slot);
	i = connect_from(s, "10.1.0.1");
	assert_null(conns[i].slot);
	assert_int_equal(stats(s).evicted, 0);
	assert_int_equal(stats(s).refused_full, 2);
	/* A third subnet: holding none, then one against 3, it takes a slot each time. */
	i = connect_from(s, "10.3.0.1");
	assert_non_null(conns[i].slot);
	assert_true(shut(0));
	i = connect_from(s, "10.3.0.1");
	assert_non_null(conns[i].slot);
	assert_int_equal(stats(s).evicted, 2);
	/* Now 3, 3 and 1 (or 2, 3, 2): the third's next is refused or fair, never equal's. */
	i = connect_from(s, "10.3.0.1");
	assert_null(conns[i].slot);
	close_all(s);
}

/* One address's subnet: its other addresses are weighed within it. */
static void test_within_subnet(void **state)
{
	struct slots *s;
	size_t i;

	(void)state;
	assert_int_equal(slots_new(4, 4, &s), 0);
	for (int k = 0; k < 4; k++)
		connect_from(s, "10.9.9.1");
	i = connect_from(s, "10.9.9.200");
	assert_non_null(conns[i].slot);
	assert_true(shut(0));
	/* 10.9.9.200 holds 1, 10.9.9.1 3: one more is fair, a third is not. */
	i = connect_from(s, "10.9.9.200");
	assert_non_null(conns[i].slot);
	i = connect_from(s, "10.9.9.200");
	assert_null(conns[i].slot);
	assert_int_equal(stats(s).evicted, 2);
	close_all(s);
}

/* As many subnets as slots, one each: a newcomer holding none still gets one. */
static void test_one_each(void **state)
{
	static const char *const a[] = { "10.1.0.1", "10.2.0.1", "10.3.0.1", "10.4.0.1" };
	struct slots *s;
	size_t i;

	(void)state;
	assert_int_equal(slots_new(4, 4, &s), 0);
	for (int k = 0; k < 4; k++)
		connect_from(s, a[k]);
	i = connect_from(s, "10.5.0.1");
	assert_non_null(conns[i].slot);
	assert_true(shut(0));
	assert_int_equal(stats(s).evicted, 1);
	close_all(s);
}

/* IPv6 clients of one /64 are one subnet; an IPv4-mapped client is the IPv4 one. */
static void test_families(void **state)
{
	struct slots *s;
	size_t i;

	(void)state;
	assert_int_equal(slots_new(4, 4, &s), 0);
	connect_from(s, "fd00:1:2:3::1");
	connect_from(s, "fd00:1:2:3::2");
	connect_from(s, "fd00:1:2:3:ffff::3");
	connect_from(s, "10.7.0.1");
	/* The /64's fourth address holds none, its subnet 3 against 1: weighed within the /64. */
	i = connect_from(s, "fd00:1:2:3::4");
	assert_non_null(conns[i].slot);
	assert_true(shut(0));
	/* ::ffff:10.7.0.1 is 10.7.0.1: its subnet holds 1 against 3, it takes a slot. */
	i = connect_from(s, "::ffff:10.7.0.1");
	assert_non_null(conns[i].slot);
	/* ::ffff:10.7.0.2, of 10.7.0.1's /24, holds none against its neighbour's 2. */
	i = connect_from(s, "::ffff:10.7.0.2");
	assert_non_null(conns[i].slot);
	assert_true(shut(3));
	assert_int_equal(stats(s).evicted, 3);
	close_all(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_slots_and_address_share),
		cmocka_unit_test(test_newcomer_evicts_heaviest_oldest),
		cmocka_unit_test(test_equal_holders_refused),
		cmocka_unit_test(test_within_subnet),
		cmocka_unit_test(test_one_each),
		cmocka_unit_test(test_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
