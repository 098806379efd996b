/* Unit test: our IPoIB RTM_NEWLINK against iproute2's, captured with strace, attribute by attribute */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/net/link-internal.h"
#include "common/net/link.h"
#include "common/net/nlsock.h"
#include "common/util/cleanup.h"

DEFINE_CLEANUP_FUNC(fclosep, FILE *, fclose);

struct capture {
	char command[512];
	struct net_link_buf msg;
	size_t len;
};

/*
 * Reads a fixture: "# command: ip link add link lo name N type ipoib pkey P
 * mode M umcast U" and strace's hex dump lines " | 00000  64 00 ...", whose
 * byte i sits at column 10 + 3i (+1 past the middle gap).
 */
static void load_capture(const char *file, struct capture *ret)
{
	_cleanup_(fclosep) FILE *f = NULL;
	const char *dir = getenv("FIXTURE_DIR");
	char path[4096], line[512];

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "fixtures", file);
	f = fopen(path, "re");
	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	memset(ret, 0, sizeof(*ret));
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "# command: ", 11) == 0) {
			snprintf(ret->command, sizeof(ret->command), "%s", line + 11);
			ret->command[strcspn(ret->command, "\n")] = '\0';
			continue;
		}
		if (strncmp(line, " | ", 3) != 0)
			continue;
		for (size_t i = 0; i < 16; i++) {
			size_t col = 10 + 3 * i + (i >= 8);
			unsigned int byte;

			if (strlen(line) < col + 2 || line[col] == ' ' ||
			    sscanf(line + col, "%2x", &byte) != 1)
				break;
			assert_true(ret->len < sizeof(ret->msg.data));
			ret->msg.data[ret->len++] = (char)byte;
		}
	}
	assert_true(ret->command[0] != '\0');
	assert_true(ret->len >= sizeof(struct nlmsghdr) + sizeof(struct ifinfomsg));
	assert_int_equal(ret->msg.align_.nlmsg_len, ret->len);
}

/* The value after a keyword of the captured command. */
static const char *arg_after(const char *command, const char *key, char *buf, size_t size)
{
	char pattern[64];
	const char *p;

	snprintf(pattern, sizeof(pattern), " %s ", key);
	p = strstr(command, pattern);
	if (!p)
		fail_msg("no %s in \"%s\"", key, command);
	p += strlen(pattern);
	snprintf(buf, size, "%.*s", (int)strcspn(p, " "), p);
	return buf;
}

struct attrs {
	const struct nlattr *a[64];
	size_t n;
};

static void collect(const void *payload, size_t len, struct attrs *ret)
{
	struct nlattr *attr;
	int rem;

	ret->n = 0;
	nla_for_each_attr(attr, (struct nlattr *)payload, (int)len, rem) {
		assert_true(ret->n < 64);
		ret->a[ret->n++] = attr;
	}
}

static const struct nlattr *find(const struct attrs *s, uint16_t type)
{
	for (size_t i = 0; i < s->n; i++)
		if (nla_type(s->a[i]) == type)
			return s->a[i];
	return NULL;
}

/* Nested attribute types at each level: IFLA_LINKINFO, then IFLA_INFO_DATA inside it. */
static bool nested(int depth, uint16_t type)
{
	return (depth == 0 && type == IFLA_LINKINFO) || (depth == 1 && type == IFLA_INFO_DATA);
}

/* Same set of attributes (order free, as for the kernel), same payloads, recursively. */
static void compare_attrs(const void *want, size_t want_len, const void *got, size_t got_len,
			  int depth, const char *what)
{
	struct attrs w, g;

	collect(want, want_len, &w);
	collect(got, got_len, &g);
	for (size_t i = 0; i < w.n; i++) {
		uint16_t type = nla_type(w.a[i]);
		const struct nlattr *o = find(&g, type);

		if (!o)
			fail_msg("%s: attribute %u (depth %d) missing from ours", what, type, depth);
		if (nested(depth, type)) {
			compare_attrs(nla_data(w.a[i]), (unsigned int)nla_len(w.a[i]),
				      nla_data(o), (unsigned int)nla_len(o), depth + 1,
				      what);
			continue;
		}
		if (nla_len(o) != nla_len(w.a[i]) ||
		    memcmp(nla_data(o), nla_data(w.a[i]), (size_t)nla_len(o)) != 0)
			fail_msg("%s: attribute %u (depth %d) differs: %d bytes vs %d", what, type, depth,
				 nla_len(o), nla_len(w.a[i]));
	}
	for (size_t i = 0; i < g.n; i++)
		if (!find(&w, nla_type(g.a[i])))
			fail_msg("%s: ours has attribute %u (depth %d) that iproute2 does not send", what,
				 nla_type(g.a[i]), depth);
}

static void compare_with(const char *fixture)
{
	struct capture cap;
	struct net_link_buf ours;
	char name[IFNAMSIZ + 1], pkey[16], mode[16], umcast[8];
	const struct nlmsghdr *want, *got;
	struct net_child child;
	int len;

	load_capture(fixture, &cap);
	/* The capture's master is lo: ifindex 1 in the fresh netns it was made in. */
	assert_non_null(strstr(cap.command, "link lo "));
	arg_after(cap.command, "mode", mode, sizeof(mode));
	child = (struct net_child){
		.kind = NET_CHILD_IPOIB,
		.name = arg_after(cap.command, "name", name, sizeof(name)),
		.master_ifindex = 1,
		.netns_fd = -1,
		.ipoib = {
			.pkey = (uint16_t)strtoul(arg_after(cap.command, "pkey", pkey, sizeof(pkey)), NULL, 0),
			.mode = strcmp(mode, "connected") == 0 ? IPOIB_MODE_CONNECTED : IPOIB_MODE_DATAGRAM,
			.umcast = (uint16_t)atoi(arg_after(cap.command, "umcast", umcast, sizeof(umcast))),
		},
	};
	len = net_link_build_create(&child, ours.data, sizeof(ours.data));
	assert_true(len > 0);

	want = &cap.msg.align_;
	got = &ours.align_;
	assert_int_equal(got->nlmsg_type, want->nlmsg_type);
	assert_int_equal(got->nlmsg_flags, want->nlmsg_flags);
	assert_int_equal(got->nlmsg_len, want->nlmsg_len);
	assert_memory_equal(nlmsg_data(got), nlmsg_data(want),
			    sizeof(struct ifinfomsg));
	compare_attrs(nlmsg_attrdata(want, sizeof(struct ifinfomsg)),
		      want->nlmsg_len - NLMSG_ALIGN(sizeof(struct nlmsghdr)) - sizeof(struct ifinfomsg),
		      nlmsg_attrdata(got, sizeof(struct ifinfomsg)),
		      got->nlmsg_len - NLMSG_ALIGN(sizeof(struct nlmsghdr)) - sizeof(struct ifinfomsg), 0,
		      cap.command);
}

static void test_datagram(void **state)
{
	(void)state;
	compare_with("ipoib-newlink-datagram.txt");
}

static void test_connected(void **state)
{
	(void)state;
	compare_with("ipoib-newlink-connected.txt");
}

/* IFLA_IPOIB_PKEY, found through IFLA_LINKINFO and IFLA_INFO_DATA. */
static uint16_t pkey_of(const struct nlmsghdr *nlh)
{
	const struct nlattr *linkinfo, *data, *pkey;
	struct attrs top, info, fields;

	collect(nlmsg_attrdata(nlh, sizeof(struct ifinfomsg)),
		nlh->nlmsg_len - NLMSG_ALIGN(sizeof(struct nlmsghdr)) - sizeof(struct ifinfomsg), &top);
	linkinfo = find(&top, IFLA_LINKINFO);
	assert_non_null(linkinfo);
	collect(nla_data(linkinfo), (unsigned int)nla_len(linkinfo), &info);
	data = find(&info, IFLA_INFO_DATA);
	assert_non_null(data);
	collect(nla_data(data), (unsigned int)nla_len(data), &fields);
	pkey = find(&fields, IFLA_IPOIB_PKEY);
	assert_non_null(pkey);
	assert_int_equal(nla_len(pkey), 2);
	return nla_get_u16(pkey);
}

/* The parsing sees what differs: a request with another pkey reads back as such. */
static void test_detects_difference(void **state)
{
	struct capture cap;
	struct net_link_buf ours;
	struct net_child child = {
		.kind = NET_CHILD_IPOIB,
		.name = "cniib0",
		.master_ifindex = 1,
		.netns_fd = -1,
		.ipoib = { .pkey = 0x7ffe, .mode = IPOIB_MODE_DATAGRAM, .umcast = 1 },
	};

	(void)state;
	load_capture("ipoib-newlink-datagram.txt", &cap);
	assert_true(net_link_build_create(&child, ours.data, sizeof(ours.data)) > 0);
	assert_int_equal(pkey_of(&cap.msg.align_), 0x7fff);
	assert_int_equal(pkey_of(&ours.align_), 0x7ffe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_datagram),
		cmocka_unit_test(test_connected),
		cmocka_unit_test(test_detects_difference),
	};

	return cmocka_run_group_tests_name("IPoIB RTM_NEWLINK vs iproute2", tests, NULL, NULL);
}
