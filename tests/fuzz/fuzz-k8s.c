/*
 * libFuzzer target: nv-ipam-tool's Kubernetes objects: lists of pools and nodes as
 * kubectl prints them, carving pools into node blocks, and a node's pool file, which
 * nv-ipam must always accept
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/cni/error.h"
#include "ipam/nv-ipam/pool.h"
#include "ipam/nv-ipam/tool/carve.h"
#include "ipam/nv-ipam/tool/k8s.h"
#include "ipam/nv-ipam/tool/nodefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void carve(const struct k8s_objects *objs)
{
	struct carve_node *nodes = NULL;
	struct cni_err err = { 0 };
	size_t n = 0;

	if (carve_nodes_from_objects(objs, &nodes, &n, &err) < 0) {
		if (!err.msg[0])
			abort();
		/* Not all are nodes: carve with none, each object as a pool. */
		nodes = NULL;
		n = 0;
	}
	for (size_t i = 0; i < objs->n_items && i < 16; i++) {
		struct carve_result res = { 0 };
		struct json_object *json = NULL;

		err = (struct cni_err){ 0 };
		(void)k8s_object_name(objs->items[i]);
		if (carve_pool(objs->items[i], nodes, n, &res, &err) < 0) {
			if (!err.msg[0])
				abort();
			continue;
		}
		if (res.invalid && res.n_allocs)
			abort();
		if (carve_result_json(&res, &json) == 0)
			json_object_put(json);
		carve_result_free(&res);
	}
	free(nodes);
}

/* Whatever the pools say, the file written for a node is one nv-ipam loads. */
static void node_file(const struct k8s_objects *objs)
{
	static const char *const names[] = { "host-a", "node-1", "" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct nvipam_pools pools = { 0 };
		struct cni_err err = { 0 };
		char *text = NULL;

		if (nodefile_render(objs, names[k], &text, &err) < 0) {
			if (!err.msg[0])
				abort();
			continue;
		}
		if (nvipam_pools_parse(text, strlen(text), "node file", &pools, &err) < 0) {
			fprintf(stderr, "a node file nv-ipam refuses: %s\n%s", err.msg, text);
			abort();
		}
		nvipam_pools_free(&pools);
		free(text);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct k8s_objects objs = { 0 };
	struct cni_err err = { 0 };

	if (k8s_objects_parse((const char *)data, size, "fuzz", &objs, &err) < 0) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	for (size_t i = 0; i < objs.n_items; i++)
		(void)k8s_object_kind(objs.items[i]);
	carve(&objs);
	node_file(&objs);
	k8s_objects_free(&objs);
	return 0;
}
