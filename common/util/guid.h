/* InfiniBand GUIDs as text: 8 colon-separated hex octets */
#pragma once

#include <stdint.h>

/* "00:11:22:33:44:55:66:77" and its terminator. */
#define GUID_TEXT_SIZE 24

/**
 * guid_parse() - an InfiniBand GUID's text as a number
 * @s: text, e.g. "02:00:00:00:00:00:00:01" (hex digits of either case)
 * @ret: the GUID, first octet most significant, as the kernel's struct ifla_vf_guid
 *       carries it; written only on success
 *
 * Exactly 8 octets of 2 hex digits each, separated by ':', nothing else (the
 * form ib-sriov-cni and ib-kubernetes use).
 *
 * Return: 0 on success, -EINVAL for anything else.
 */
int guid_parse(const char *s, uint64_t *ret);

/**
 * guid_format() - a GUID's text, lowercase
 * @guid: the GUID
 * @buf: output, GUID_TEXT_SIZE bytes
 *
 * Return: @buf.
 */
const char *guid_format(uint64_t guid, char buf[GUID_TEXT_SIZE]);
