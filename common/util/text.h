/* Text: UTF-8 decoding and escaping of untrusted strings for logs and messages */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * text_utf8_decode() - decode one UTF-8 sequence
 * @s: bytes
 * @n: how many bytes are available at @s (at least 1)
 * @ret_cp: the code point, written only when valid (may be NULL)
 *
 * Overlong forms, surrogates and code points above U+10FFFF are invalid, as
 * for json-c's validating tokener.
 *
 * Return: the length of the sequence (1 to 4), 0 when it is not valid UTF-8.
 */
size_t text_utf8_decode(const char *s, size_t n, uint32_t *ret_cp);

/**
 * text_utf8_valid() - whether a byte string is valid UTF-8 throughout
 * @s: bytes
 * @n: their number
 *
 * Return: true when valid.
 */
bool text_utf8_valid(const char *s, size_t n);

/* The first argument of the first text_hash64() of a chain. */
#define TEXT_HASH64_INIT 0xcbf29ce484222325ULL

/**
 * text_hash64() - FNV-1a over bytes: a stable, short stand-in for a name
 * @data: bytes
 * @len: their number
 * @h: TEXT_HASH64_INIT, or the value of a previous call to chain data
 *
 * Not a defence against someone choosing inputs to collide.
 *
 * Return: the hash.
 */
uint64_t text_hash64(const void *data, size_t len, uint64_t h);

/**
 * text_escape() - make untrusted text safe to put in a line of a log or a message
 * @s: text (need not be NUL-terminated)
 * @n: its length in bytes
 * @out: output buffer, always NUL-terminated when @size > 0
 * @size: its size
 *
 * Control characters (C0, DEL and C1) become \n, \r, \t or \xNN (\u0085 and
 * the like for C1), a backslash becomes \\, and every byte that is not part
 * of valid UTF-8 becomes \xNN; everything else is copied. An escape is never
 * cut in half: when @out is too small the text stops before it.
 *
 * Return: the length written to @out (without the terminator).
 */
size_t text_escape(const char *s, size_t n, char *out, size_t size);
