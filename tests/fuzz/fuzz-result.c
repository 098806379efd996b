/* libFuzzer target: CNI results of every version, rendered to every version and read back */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/result.h"
#include "common/cni/version.h"
#include "common/util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *version, const char *text, const struct cni_err *err)
{
	fprintf(stderr, "%s (version %s): %s\n--- text ---\n%s\n------------\n", what, version,
		err ? err->msg : "", text ? text : "");
	abort();
}

/*
 * A result this suite prints (to the runtime, or as prevResult for the next plugin)
 * must be readable by this suite again, and printing what was read must give the
 * same text. The 0.1.0/0.2.0 shape drops interfaces and can refuse results without
 * IPs, so it is only rendered, not checked.
 */
static void render_all(const struct cni_result *res)
{
	for (size_t i = 0; i < cni_versions_count; i++) {
		const char *v = cni_versions[i];
		bool checked = cni_version_cmp(v, "0.3.0") >= 0;
		struct cni_result back = { 0 };
		struct cni_err err = { 0 };
		char *out = NULL, *again = NULL;
		int r;

		r = cni_result_to_json(res, v, &out, &err);
		if (r < 0) {
			if (err.code == CNI_OK)
				fail("cni_result_to_json failed without an error", v, NULL, NULL);
			if (checked)
				fail("cni_result_to_json refused a parsed result", v, NULL, &err);
			continue;
		}
		r = cni_result_parse(out, strlen(out), v, &back, &err);
		if (r < 0) {
			if (err.code == CNI_OK)
				fail("cni_result_parse failed without an error", v, out, NULL);
			if (checked)
				fail("cannot parse a result this suite printed", v, out, &err);
			free(out);
			continue;
		}
		if (strcmp(back.cni_version, v) != 0)
			fail("printed result read back with another version", v, out, NULL);
		r = cni_result_to_json(&back, v, &again, &err);
		if (r < 0 && checked)
			fail("cni_result_to_json refused a result read back", v, out, &err);
		if (r == 0 && checked && strcmp(out, again) != 0) {
			fprintf(stderr, "--- second rendering ---\n%s\n", again);
			fail("printing a read-back result changed it", v, out, NULL);
		}
		free(again);
		cni_result_free(&back);
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The fallback only matters without "cniVersion"; try them all, and nonsense. */
	static const char *const extra[] = { "", "0.5.0" };

	for (size_t i = 0; i < cni_versions_count + 2; i++) {
		const char *fallback = i < cni_versions_count ? cni_versions[i] :
								 extra[i - cni_versions_count];
		struct cni_result res = { 0 };
		struct cni_err err = { 0 };
		bool own;
		int r;

		r = cni_result_parse((const char *)data, size, fallback, &res, &err);
		if (r < 0) {
			if (err.code == CNI_OK)
				fail("cni_result_parse failed without an error", fallback, NULL, NULL);
			continue;
		}
		if (!cni_version_supported(res.cni_version))
			fail("parsed a result of an unsupported version", res.cni_version, NULL, NULL);
		render_all(&res);
		/* With its own cniVersion the fallback is not used: one pass is enough. */
		own = strcmp(res.cni_version, fallback) != 0;
		cni_result_free(&res);
		if (own)
			break;
	}
	return 0;
}
