/* Test helper: iproute2's RTM_NEWLINK captured with strace, and a request compared with it */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "common/util/cleanup.h"
#include "tests/unit/newlink-capture.h"

DEFINE_CLEANUP_FUNC(capture_fclosep, FILE *, fclose);

/* Byte i of a dump line " | 00000  58 00 ..." sits at column 10 + 3i (+1 past the middle gap). */
void newlink_capture_load(const char *file, struct newlink_capture *ret)
{
	_cleanup_(capture_fclosep) FILE *f = NULL;
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

struct attrs {
	const struct nlattr *a[64];
	size_t n;
};

static bool collect(const void *payload, size_t len, struct attrs *ret)
{
	struct nlattr *attr;
	int rem;

	ret->n = 0;
	nla_for_each_attr(attr, (struct nlattr *)payload, (int)len, rem) {
		if (ret->n == 64)
			return false;
		ret->a[ret->n++] = attr;
	}
	return true;
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

static bool attrs_equal(const void *want, size_t want_len, const void *got, size_t got_len,
			int depth, char *why, size_t size)
{
	struct attrs w, g;

	if (!collect(want, want_len, &w) || !collect(got, got_len, &g)) {
		snprintf(why, size, "more than 64 attributes (depth %d)", depth);
		return false;
	}
	for (size_t i = 0; i < w.n; i++) {
		uint16_t type = nla_type(w.a[i]);
		const struct nlattr *o = find(&g, type);

		if (!o) {
			snprintf(why, size, "attribute %u (depth %d) missing from ours", type, depth);
			return false;
		}
		if (nested(depth, type)) {
			if (!attrs_equal(nla_data(w.a[i]), (size_t)nla_len(w.a[i]), nla_data(o),
					 (size_t)nla_len(o), depth + 1, why, size))
				return false;
			continue;
		}
		if (nla_len(o) != nla_len(w.a[i]) ||
		    memcmp(nla_data(o), nla_data(w.a[i]), (size_t)nla_len(o)) != 0) {
			snprintf(why, size, "attribute %u (depth %d) differs: %d bytes vs %d", type, depth,
				 nla_len(o), nla_len(w.a[i]));
			return false;
		}
	}
	for (size_t i = 0; i < g.n; i++) {
		if (!find(&w, nla_type(g.a[i]))) {
			snprintf(why, size, "ours has attribute %u (depth %d) that iproute2 does not send",
				 nla_type(g.a[i]), depth);
			return false;
		}
	}
	return true;
}

bool newlink_equal(const struct nlmsghdr *want, const struct nlmsghdr *got, char *why, size_t size)
{
	size_t hdr = NLMSG_ALIGN(sizeof(struct nlmsghdr)) + sizeof(struct ifinfomsg);

	if (got->nlmsg_type != want->nlmsg_type || got->nlmsg_flags != want->nlmsg_flags) {
		snprintf(why, size, "type/flags %u/%#x vs %u/%#x", got->nlmsg_type, got->nlmsg_flags,
			 want->nlmsg_type, want->nlmsg_flags);
		return false;
	}
	if (got->nlmsg_len != want->nlmsg_len) {
		snprintf(why, size, "length %u vs %u", got->nlmsg_len, want->nlmsg_len);
		return false;
	}
	if (memcmp(nlmsg_data(got), nlmsg_data(want), sizeof(struct ifinfomsg)) != 0) {
		snprintf(why, size, "ifinfomsg differs");
		return false;
	}
	return attrs_equal(nlmsg_attrdata(want, sizeof(struct ifinfomsg)), want->nlmsg_len - hdr,
			   nlmsg_attrdata(got, sizeof(struct ifinfomsg)), got->nlmsg_len - hdr, 0, why,
			   size);
}
