/*
 * Test helper: the checksums the nv-ipam store's files carry, for tests that write a
 * store by hand (a damaged one, or the reference daemon's)
 *
 *   store-sums lines   stdin: lines of tab-separated fields; stdout: each line with its
 *                      checksum field, as a pool log holds it
 *   store-sums fnv32   stdin: bytes; stdout: their FNV-1a-32 in decimal, the reference
 *                      daemon's checksum of its store (over what Go marshals)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "common/util/text.h"

int main(int argc, char **argv)
{
	_cleanup_free_ char *in = NULL;
	size_t len = 0;

	if (argc != 2 || (strcmp(argv[1], "lines") != 0 && strcmp(argv[1], "fnv32") != 0)) {
		fprintf(stderr, "usage: store-sums lines|fnv32 <input\n");
		return 2;
	}
	if (file_read_fd(STDIN_FILENO, 64u << 20, &in, &len) < 0) {
		fprintf(stderr, "store-sums: cannot read stdin\n");
		return 1;
	}
	if (strcmp(argv[1], "fnv32") == 0) {
		printf("%" PRIu32 "\n", text_hash32(in, len, TEXT_HASH32_INIT));
		return 0;
	}
	for (size_t pos = 0; pos < len;) {
		const char *line = in + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;

		printf("%.*s\t%016" PRIx64 "\n", (int)n, line, text_checksum64(line, n));
		pos += n + 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
