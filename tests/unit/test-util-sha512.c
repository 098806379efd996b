/* Unit tests: SHA-512 against FIPS 180-4's vectors and coreutils, upstream's hashed names */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/util/sha512.h"

static void hex(const void *data, size_t len, char *out)
{
	uint8_t d[SHA512_DIGEST_BYTES];

	sha512(data, len, d);
	for (size_t i = 0; i < sizeof(d); i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_vectors(void **state)
{
	/* FIPS 180-4 examples, and the padding's edges (111, 112, 128 bytes), from sha512sum. */
	static const struct {
		size_t repeat;
		const char *text, *digest;
	} v[] = {
		{ 1, "abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
		{ 1, "", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e" },
		{ 1, "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909" },
		{ 111, "a", "fa9121c7b32b9e01733d034cfc78cbf67f926c7ed83e82200ef86818196921760b4beff48404df811b953828274461673c68d04e297b0eb7b2b4d60fc6b566a2" },
		{ 112, "a", "c01d080efd492776a1c43bd23dd99d0a2e626d481e16782e75d54c2503b5dc32bd05f0f1ba33e568b88fd2d970929b719ecbb152f58f130a407c8830604b70ca" },
		{ 128, "a", "b73d1929aa615934e61a871596b3f3b33359f42b8175602e89f7e06e5f658a243667807ed300314b95cacdd579f3e33abdfbe351909519a846d465c59582f321" },
	};
	char out[2 * SHA512_DIGEST_BYTES + 1], *buf;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = strlen(v[i].text) * v[i].repeat;

		buf = malloc(n + 1);
		assert_non_null(buf);
		for (size_t k = 0; k < v[i].repeat; k++)
			memcpy(buf + k * strlen(v[i].text), v[i].text, strlen(v[i].text));
		hex(buf, n, out);
		assert_string_equal(out, v[i].digest);
		free(buf);
	}
}

/* Messages of several blocks (Python's hashlib gave the digests' first 16 bytes). */
static void test_blocks(void **state)
{
	static const struct {
		size_t len;
		const char *want;
	} v[] = {
		{ 127, "1d5b3c8b271d603ca01fb4dab9cdff24" },
		{ 239, "6902832feb9deffc87a13bb6e48a2849" },
		{ 1000, "a3c7751c48f72e559fc81520edc80e68" },
	};
	char text[1441], out[2 * SHA512_DIGEST_BYTES + 1];

	(void)state;
	for (size_t i = 0; i < 40; i++)
		memcpy(text + 36 * i, "abcdefghijklmnopqrstuvwxyz0123456789", 36);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hex(text, v[i].len, out);
		out[32] = '\0';
		assert_string_equal(out, v[i].want);
	}
}

static void test_names(void **state)
{
	char name[64];

	(void)state;
	/* portmap's chain of network "rmpm", container "rmcid1" (the reference's, read back). */
	assert_int_equal(sha512_name(28, "CNI-DN-", "rmpmrmcid1", name, sizeof(name)), 0);
	assert_string_equal(name, "CNI-DN-164cddbc31700e1d05161");
	assert_int_equal(strlen(name), 28);
	/* bandwidth's ifb device: 15 characters, "bwp" first. */
	assert_int_equal(sha512_name(15, "bwp", "abc", name, sizeof(name)), 0);
	assert_string_equal(name, "bwpddaf35a19361");
	/* The bounds upstream panics on, and a buffer too small. */
	assert_int_equal(sha512_name(3, "bwp", "abc", name, sizeof(name)), -EINVAL);
	assert_int_equal(sha512_name(3 + 129, "bwp", "abc", name, sizeof(name)), -EINVAL);
	assert_int_equal(sha512_name(15, "bwp", "abc", name, 15), -EINVAL);
	/* bridge's ipMasq nftables chains: the network's hash alone, 16 characters. */
	assert_int_equal(sha512_name(16, "", "brn", name, sizeof(name)), 0);
	assert_string_equal(name, "e448f3688a7be767");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_blocks),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
