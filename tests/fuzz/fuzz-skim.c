/*
 * libFuzzer target: a pool's text cut before it is parsed (carve_status_skim(), as
 * ipam-node reads each pool and each watch event): never past its input, and whenever the
 * whole text parses, the cut one parses too and gives the node the same pool file and the
 * same notes once both are trimmed (carve_pool_trim()). The first byte picks the node and
 * the kind; the rest is the text, a pool or an event carrying one in "object".
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/carve/nodefile.h"
#include "ipam/nv-ipam/carve/skim.h"
#include "ipam/nv-ipam/k8s/k8s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The node's file and notes from the pool in @o (or its "object"), trimmed as ipam-node does. */
static void render(struct json_object *o, const char *node, bool cidrpool, char **text,
		   char **notes)
{
	struct json_object *pool = k8s_object_member(o, "object", NULL), *kept = NULL;
	struct k8s_objects objs;
	struct cni_err err = { 0 };
	size_t len = 0;
	FILE *f;

	if (!json_object_is_type(pool, json_type_object))
		pool = o;
	if (carve_pool_trim(pool, cidrpool, node, &kept) < 0)
		abort();
	objs = (struct k8s_objects){ .items = &kept, .n_items = 1 };
	f = open_memstream(notes, &len);
	if (!f)
		abort();
	if (nodefile_render(&objs, node, text, f, &err) < 0)
		*text = NULL;
	if (fclose(f) != 0)
		abort();
	json_object_put(kept);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const nodes[] = { "host-a", "node-1", "a" };
	struct json_object *whole = NULL, *cut_obj = NULL;
	char *text = NULL, *cut = NULL, *t1 = NULL, *n1 = NULL, *t2 = NULL, *n2 = NULL;
	struct cni_err err = { 0 };
	const char *node;
	bool cidrpool;
	size_t cut_len = 0;
	int r;

	if (size < 1)
		return 0;
	node = nodes[data[0] % 3];
	cidrpool = data[0] & 4;
	/* A copy of its own: a read past the text is one past the allocation. */
	text = malloc(size - 1 ? size - 1 : 1);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	r = carve_status_skim(text, size - 1, node, cidrpool, &cut, &cut_len);
	if (r < 0)
		abort();
	if (cjson_parse(text, size - 1, "whole", &whole, &err) == 0 &&
	    json_object_is_type(whole, json_type_object)) {
		if (r > 0 && cjson_parse(cut, cut_len, "cut", &cut_obj, &err) < 0) {
			fprintf(stderr, "the cut text does not parse: %s\n%.*s\n", err.msg, (int)cut_len, cut);
			abort();
		}
		render(whole, node, cidrpool, &t1, &n1);
		render(r > 0 ? cut_obj : whole, node, cidrpool, &t2, &n2);
		if ((t1 == NULL) != (t2 == NULL) || (t1 && strcmp(t1, t2) != 0) || strcmp(n1, n2) != 0) {
			fprintf(stderr, "whole and cut render otherwise:\n%s%s---\n%s%s", t1 ? t1 : "(none)\n",
				n1, t2 ? t2 : "(none)\n", n2);
			abort();
		}
	}
	json_object_put(whole);
	json_object_put(cut_obj);
	free(t1);
	free(n1);
	free(t2);
	free(n2);
	free(cut);
	free(text);
	return 0;
}
