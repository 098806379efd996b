/* RFC 3339 times: parsed in any form, written as "YYYY-MM-DDTHH:MM:SSZ" */
#pragma once

#include <stddef.h>
#include <time.h>

/* "YYYY-MM-DDTHH:MM:SSZ" and its terminator. */
#define RFC3339_STRLEN 21

/* 9999-12-31T23:59:59Z, the last second RFC 3339 can write with four year digits. */
#define RFC3339_MAX ((time_t)253402300799LL)

/**
 * rfc3339_parse() - read "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+hh:mm|-hh:mm)"
 * @s: text
 * @ret: seconds since the epoch (the fraction dropped; a time before the epoch
 *       gives 0), written only on success
 *
 * Return: 0 on success, -EINVAL when @s is not such a time or names a day that
 * does not exist.
 */
int rfc3339_parse(const char *s, time_t *ret);

/**
 * rfc3339_format() - write a time in UTC, clamped to 1970..9999
 * @t: seconds since the epoch
 * @out: at least RFC3339_STRLEN bytes
 *
 * Done by hand: gmtime_r() takes the time zone lock, and stores write many.
 *
 * Return: @out.
 */
const char *rfc3339_format(time_t t, char *out);
