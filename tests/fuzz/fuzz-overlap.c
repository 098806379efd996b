/*
 * libFuzzer target: overlapping pools, from pool objects any namespace editor writes:
 * the prefixes read, the finder's pairs exactly those a comparison of every pair gives,
 * the webhook's warnings or denial and the controller's Events for each pool
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "ipam/nv-ipam/controller/overlap_events.h"
#include "ipam/nv-ipam/controller/overlap_hook.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/overlap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int told(void *ctx, struct json_object *pool, const char *message)
{
	(void)pool;
	if (!*message || strchr(message, '\n'))
		abort(); /* one line: names and prefixes are escaped */
	return (*(size_t *)ctx)++ % 3 == 0 ? -1 : 0;
}

static void check_pairs(const struct overlap_item *items, size_t n)
{
	struct overlap_result res = { 0 };
	size_t k = 0;

	if (overlap_find(items, n, SIZE_MAX, &res) < 0)
		return;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			if (!overlap_meet(&items[a], &items[b]))
				continue;
			if (k >= res.n || res.pairs[k].a != a || res.pairs[k].b != b)
				abort();
			k++;
		}
	if (k != res.n || res.truncated)
		abort();
	overlap_result_free(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct k8s_objects objs = { 0 };
	struct cni_err err = { 0 };
	struct overlap_item *items = NULL;
	struct overlap_seen seen = { 0 };
	size_t n = 0, calls = 0;

	if (size > 1 << 16 || k8s_objects_parse((const char *)data, size, "fuzz", &objs, &err) < 0)
		return 0;
	if (objs.n_items > 64)
		goto out;
	if (overlap_items_from_pools(objs.items, objs.n_items, &items, NULL, &n) == 0)
		check_pairs(items, n);
	for (int pass = 0; pass < 2; pass++)
		(void)overlap_events_pass(&seen, objs.items, objs.n_items, told, &calls);
	for (size_t i = 0; i < objs.n_items; i++)
		for (int reject = 0; reject < 2; reject++) {
			struct admission_pools pools = { .objs = objs.items, .n = objs.n_items,
							.ns = "kube-system", .reject = reject };
			struct json_object *warnings = NULL;
			char *denial = NULL;

			if (overlap_hook_check(objs.items[i], &pools, &warnings, &denial) < 0)
				continue;
			if ((warnings && reject) || (denial && (!reject || strchr(denial, '\n'))))
				abort();
			json_object_put(warnings);
			free(denial);
		}
out:
	free(items);
	overlap_seen_free(&seen);
	k8s_objects_free(&objs);
	return 0;
}
