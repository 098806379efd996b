/* The store file of version 2: the manifest that says the allocations are in the pool logs */
#include <stdio.h>
#include <string.h>

#include "common/util/text.h"
#include "ipam/nv-ipam/store/manifest.h"

void store_manifest_render(struct text_buf *b, const char *pool_dir)
{
	char version[16];

	/* Written by hand to the letter: the file says what it is, for people and older plugins. */
	snprintf(version, sizeof(version), "%d", STORE_MANIFEST_VERSION);
	text_buf_puts(b, "{\"version\":");
	text_buf_puts(b, version);
	text_buf_puts(b, ",\"pools\":");
	text_buf_put_json_str(b, pool_dir, TEXT_JSON_PLAIN);
	text_buf_puts(b, "}\n");
}

bool store_manifest_is_current(const char *data, size_t len, const char *pool_dir)
{
	struct text_buf b = { 0 };
	bool same;

	store_manifest_render(&b, pool_dir);
	same = !b.oom && b.len == len && memcmp(b.data, data, len) == 0;
	text_buf_free(&b);
	return same;
}
