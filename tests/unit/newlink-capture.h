/* Test helper: iproute2's RTM_NEWLINK captured with strace, and a request compared with it */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/net/link-internal.h"

struct newlink_capture {
	char command[512];      /* the `ip link add ...` line the capture was made with */
	struct net_link_buf msg;
	size_t len;
};

/**
 * newlink_capture_load() - read a fixture of FIXTURE_DIR (cmocka-fails when it is unreadable)
 * @file: its name: "# command: ..." and strace's hex dump lines " | 00000  58 00 ..."
 * @ret: the capture
 */
void newlink_capture_load(const char *file, struct newlink_capture *ret);

/**
 * newlink_equal() - whether two RTM_NEWLINK requests say the same to the kernel
 * @want: iproute2's
 * @got: ours
 * @why: what differs first, when they differ
 * @size: size of @why
 *
 * Same type, flags and length, same ifinfomsg, the same attributes with the
 * same payloads (in any order, as the kernel reads them), IFLA_LINKINFO and
 * IFLA_INFO_DATA compared member by member.
 *
 * Return: true when they are equal.
 */
bool newlink_equal(const struct nlmsghdr *want, const struct nlmsghdr *got, char *why, size_t size);
