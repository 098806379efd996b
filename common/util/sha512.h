/* SHA-512 (FIPS 180-4): what upstream's plugins name their netfilter chains and rules by */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA512_DIGEST_SIZE 64

/**
 * sha512() - the SHA-512 digest of a byte string
 * @data: the bytes
 * @len: their number
 * @ret: the digest
 */
void sha512(const void *data, size_t len, uint8_t ret[SHA512_DIGEST_SIZE]);
