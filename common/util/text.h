/* Text: UTF-8, escaping of untrusted strings, JSON strings, growable buffers, hashes */
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

/**
 * text_utf8_scrub() - a copy with every byte that is not part of valid UTF-8 replaced by
 *                     U+FFFD, as Go's decoder reads such a byte in a JSON string
 * @s: bytes
 * @n: their number
 * @ret_len: the copy's length (without its terminator)
 *
 * Return: the malloc'ed, NUL-terminated copy, or NULL when out of memory.
 */
char *text_utf8_scrub(const char *s, size_t n, size_t *ret_len);

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

/**
 * text_unescape() - undo text_escape(), in place
 * @s: escaped text (need not be NUL-terminated); decoded over itself, never longer
 * @n: its length in bytes
 * @ret_len: length of the decoded text; a NUL is written after it when it is shorter than @n
 *
 * Decodes \\, \n, \r, \t, \xNN (not \x00) and \uNNNN (U+0001 to U+FFFF, no
 * surrogate); every other character must be valid UTF-8 and not a C0 control or DEL,
 * as text_escape() leaves them. A string escaped and unescaped is the string again,
 * bytes that are not UTF-8 included.
 *
 * Return: 0 on success, -EINVAL for anything else (@s is then left partly decoded).
 */
int text_unescape(char *s, size_t n, size_t *ret_len);

/* The first argument of the first text_hash32() of a chain. */
#define TEXT_HASH32_INIT 2166136261u

/**
 * text_hash32() - 32-bit FNV-1a over bytes (the checksum Go's hash/fnv New32a gives)
 * @data: bytes
 * @len: their number
 * @h: TEXT_HASH32_INIT, or the value of a previous call to chain data
 *
 * Return: the hash.
 */
uint32_t text_hash32(const void *data, size_t len, uint32_t h);

/**
 * text_hex_digit() - the value of a hexadecimal digit, either case
 * @c: the character
 *
 * Return: 0 to 15, or -1 when @c is not a hexadecimal digit.
 */
int text_hex_digit(char c);

/**
 * text_checksum64() - a fast 64-bit checksum of bytes, eight at a time
 * @data: bytes
 * @len: their number
 *
 * For telling damaged data from good data (a flipped bit, a torn or edited line),
 * several times faster than text_hash64() on long input. Like it, no defence
 * against someone choosing inputs to collide.
 *
 * Return: the checksum.
 */
uint64_t text_checksum64(const void *data, size_t len);

/* A growable byte buffer; an allocation failure is sticky and checked once at the end. */
struct text_buf {
	char *data;
	size_t len;
	size_t cap;
	bool oom;
};

/**
 * text_buf_reserve() - make room for more bytes
 * @b: buffer
 * @more: bytes about to be added
 */
void text_buf_reserve(struct text_buf *b, size_t more);

/**
 * text_buf_add() - append bytes
 * @b: buffer
 * @s: bytes
 * @n: their number
 */
void text_buf_add(struct text_buf *b, const void *s, size_t n);

/**
 * text_buf_puts() - append a string
 * @b: buffer
 * @s: string
 */
void text_buf_puts(struct text_buf *b, const char *s);

/**
 * text_buf_putc() - append one byte
 * @b: buffer
 * @c: byte
 */
void text_buf_putc(struct text_buf *b, char c);

/**
 * text_buf_put_escaped() - append text_escape() of a string, however long
 * @b: buffer
 * @s: text
 * @n: its length in bytes
 */
void text_buf_put_escaped(struct text_buf *b, const char *s, size_t n);

enum text_json_style {
	TEXT_JSON_PLAIN, /* '"', '\\' and control characters escaped */
	TEXT_JSON_GO,    /* as Go's encoding/json: also <, >, &, U+2028 and U+2029 */
};

/**
 * text_buf_put_json_str() - append a string as a JSON string literal
 * @b: buffer
 * @s: string
 * @style: which characters are escaped
 *
 * Bytes that are not valid UTF-8 are written as \ufffd, as Go writes them, so the
 * output is always valid JSON.
 */
void text_buf_put_json_str(struct text_buf *b, const char *s, enum text_json_style style);

/**
 * text_buf_free() - release a buffer's memory and zero it
 * @b: buffer
 */
void text_buf_free(struct text_buf *b);

/**
 * text_distance() - how many edits apart two short words are, case aside, up to a bound
 * @a: a word
 * @b: another
 * @max: the bound: a larger distance is reported as @max + 1
 *
 * The edits: a letter added, dropped or changed, or two neighbours swapped (the
 * optimal string alignment distance). Words over 63 bytes are @max + 1 apart.
 *
 * Return: the distance, at most @max + 1.
 */
unsigned int text_distance(const char *a, const char *b, unsigned int max);

/**
 * text_near() - whether two short words are at most @max edits apart, case aside
 * @a: a word
 * @b: another
 * @max: the edits allowed (a letter added, dropped, changed, or two swapped)
 *
 * For telling a misspelt key from an unrelated one; words over 63 bytes are never near.
 *
 * Return: true when near, equal words included.
 */
bool text_near(const char *a, const char *b, unsigned int max);
