/* Durations as Go's flag package takes them ("1m30s", "500ms", "1.5h") */
#pragma once

/**
 * go_duration_ms() - a Go duration ("1m", "90s", "1m30s", "500ms", "1.5h")
 * @s: text
 * @ret: milliseconds, written only on success
 *
 * Return: 0 on success, -EINVAL (negative, no unit, or more than a year).
 */
int go_duration_ms(const char *s, long *ret);
