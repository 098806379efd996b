/* Go's white space, as upstream trims its store's files and splits resolv.conf lines */
#pragma once

#include <stddef.h>

/**
 * hl_space_len() - the length of one white-space character (Go's unicode.IsSpace) at @s
 * @s: UTF-8 text
 * @n: bytes available (at least 1)
 *
 * Return: its bytes, 0 when @s does not start with white space (invalid UTF-8 is none).
 */
size_t hl_space_len(const char *s, size_t n);

/**
 * hl_trim_space() - Go's strings.TrimSpace()
 * @s: text, changed in place (its end is cut with a NUL)
 * @n: its length
 * @ret_n: the length of what is left
 *
 * Return: where what is left begins, inside @s.
 */
char *hl_trim_space(char *s, size_t n, size_t *ret_n);

/**
 * hl_next_field() - Go's strings.Fields(), one field at a time
 * @s: text (NUL-terminated), advanced past the field returned
 * @ret_n: the field's length
 *
 * Return: where the field begins, NULL when no field is left.
 */
const char *hl_next_field(const char **s, size_t *ret_n);
