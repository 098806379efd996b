/* SHA-512, and the hashed names upstream's plugins give chains, comments and devices */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA512_DIGEST_BYTES 64

/**
 * sha512() - the SHA-512 digest of a byte string (FIPS 180-4)
 * @data: bytes
 * @len: their number
 * @ret: the digest
 */
void sha512(const void *data, size_t len, uint8_t ret[SHA512_DIGEST_BYTES]);

/**
 * sha512_name() - @prefix, then the lowercase hex of sha512(@text), cut to @len characters
 * @len: the name's length, longer than @prefix and at most its length plus 128
 * @prefix: what the name starts with
 * @text: what is hashed
 * @buf: output, at least @len + 1 bytes
 * @size: its size
 *
 * What upstream's MustFormatHashWithPrefix() makes: portmap's "CNI-DN-" chains
 * (28 characters), bandwidth's "bwp" ifb devices (15), bridge's masquerade chains
 * and comments. A node moved between them and ours finds the same names.
 *
 * Return: 0 on success, -EINVAL for a length out of those bounds or a buffer too small.
 */
int sha512_name(size_t len, const char *prefix, const char *text, char *buf, size_t size);
