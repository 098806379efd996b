/*
 * libFuzzer target: nv-ipam-tool's Kubernetes objects: lists of pools and nodes as
 * kubectl prints them, carving pools into node blocks, a node's pool file (which
 * nv-ipam must always accept, and the same from the pools trimmed as ipam-node keeps them),
 * gc's pod listing; and gc's miss counts file, written
 * back as it was read
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/error.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/carve/nodefile.h"
#include "ipam/nv-ipam/gc/misses.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/pods.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/store/store.h"

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

/*
 * The pools as ipam-node keeps them (carve_pool_trim()) give the same file and notes as
 * whole (@text and @notes: the render of @objs for @node).
 */
static void node_file_trimmed(const struct k8s_objects *objs, const char *node, const char *text,
			      const char *notes)
{
	struct json_object **v = calloc(objs->n_items + 1, sizeof(*v));
	struct k8s_objects trimmed = { .items = v, .n_items = objs->n_items };
	struct cni_err err = { 0 };
	char *text2 = NULL, *notes2 = NULL;
	size_t len = 0;
	FILE *f;

	if (!v)
		abort();
	for (size_t i = 0; i < objs->n_items; i++)
		if (carve_pool_trim(objs->items[i], strcmp(k8s_object_kind(objs->items[i]), "CIDRPool") == 0,
				    node, &v[i]) < 0)
			abort();
	f = open_memstream(&notes2, &len);
	if (!f || nodefile_render(&trimmed, node, &text2, f, &err) < 0 || fclose(f) != 0)
		abort();
	if (strcmp(text, text2) != 0 || strcmp(notes, notes2) != 0) {
		fprintf(stderr, "trimmed pools render otherwise:\n%s%s---\n%s%s", text, notes, text2, notes2);
		abort();
	}
	free(text2);
	free(notes2);
	for (size_t i = 0; i < objs->n_items; i++)
		json_object_put(v[i]);
	free(v);
}

/* Whatever the pools say, the file written for a node is one nv-ipam loads. */
static void node_file(const struct k8s_objects *objs)
{
	static const char *const names[] = { "host-a", "node-1", "" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct nvipam_pools pools = { 0 };
		struct cni_err err = { 0 };
		char *text = NULL, *notes_text = NULL;
		size_t notes_len = 0;
		FILE *notes = open_memstream(&notes_text, &notes_len);
		int r;

		if (!notes)
			abort();
		r = nodefile_render(objs, names[k], &text, notes, &err);
		if (fclose(notes) != 0)
			abort();
		if (r < 0) {
			free(notes_text);
			if (!err.msg[0])
				abort();
			continue;
		}
		node_file_trimmed(objs, names[k], text, notes_text);
		free(notes_text);
		if (nvipam_pools_parse(text, strlen(text), "node file", &pools, &err) < 0) {
			fprintf(stderr, "a node file nv-ipam refuses: %s\n%s", err.msg, text);
			abort();
		}
		nvipam_pools_free(&pools);
		free(text);
	}
}

/* A listing that parses holds only valid names, and finds each of its pods. */
static void pod_listing(const uint8_t *data, size_t size)
{
	struct cni_err err = { 0 };
	struct pods p = { 0 };

	if (pods_parse((const char *)data, size, "fuzz", &p, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	for (size_t i = 0; i < p.n; i++) {
		const struct pods_entry *e = &p.v[i];

		if (!e->ns[0] || !e->name[0] || pods_lookup(&p, e->ns, e->name, e->uid, NULL) != PODS_PRESENT)
			abort();
	}
	pods_free(&p);
}

/* A counts file that parses is written back with the same entries. */
static void miss_counts(const uint8_t *data, size_t size)
{
	struct misses m = { 0 }, again = { 0 };
	struct nvipam_alloc *allocs = NULL;
	const struct nvipam_alloc **ptrs = NULL;
	unsigned long *counts = NULL;
	struct cni_err err = { 0 };
	char *text = NULL;
	size_t len = 0;

	if (misses_parse((const char *)data, size, "fuzz", &m, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	allocs = calloc(m.n + 1, sizeof(*allocs));
	ptrs = calloc(m.n + 1, sizeof(*ptrs));
	counts = calloc(m.n + 1, sizeof(*counts));
	if (!allocs || !ptrs || !counts)
		abort();
	for (size_t i = 0; i < m.n; i++) {
		allocs[i] = (struct nvipam_alloc){ .pool = m.v[i].pool, .ip = m.v[i].ip,
						   .container_id = m.v[i].container_id,
						   .ifname = m.v[i].ifname, .created = m.v[i].created };
		ptrs[i] = &allocs[i];
		counts[i] = m.v[i].count;
	}
	if (misses_format(ptrs, counts, m.n, &text, &len) < 0)
		abort();
	if (misses_parse(text, len, "fuzz (written back)", &again, &err) < 0) {
		fprintf(stderr, "counts written back do not parse: %s\n%.*s\n", err.msg, (int)len, text);
		abort();
	}
	if (again.n != m.n)
		abort();
	/* Entries sharing a key (a hand-made file) may come back in another order. */
	for (size_t i = 0; i < m.n; i++) {
		bool unique = (i == 0 || misses_alloc_cmp(&ptrs[i - 1], &ptrs[i]) != 0) &&
			      (i + 1 == m.n || misses_alloc_cmp(&ptrs[i], &ptrs[i + 1]) != 0);

		if (unique && misses_get(&again, &allocs[i]) != counts[i])
			abort();
	}
	misses_free(&again);
	free(text);
	free(counts);
	free(ptrs);
	free(allocs);
	misses_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct k8s_objects objs = { 0 };
	struct cni_err err = { 0 };

	pod_listing(data, size);
	miss_counts(data, size);
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
