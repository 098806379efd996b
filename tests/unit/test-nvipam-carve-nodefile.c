/*
 * Unit tests: the node pool file written from the pools' status (carve/nodefile.c), and the
 * status entries it refuses as the reference node daemon does (its CIDRPool reconciler
 * validates the pool and the node's allocation, CIDRPoolAllocation.Validate(), and drops the
 * pool when either fails; its IPPool's spec is validated by the controller, which empties
 * the status of an invalid one). One test per refusal, each with the accepted case beside it.
 * Every render is made three times, of the pools whole, trimmed as ipam-node keeps them
 * (carve_pool_trim()), and trimmed from their text cut first (carve_status_skim(), as
 * ipam-node reads each pool): the file and the notes must be the same.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/carve/nodefile.h"
#include "ipam/nv-ipam/carve/skim.h"
#include "ipam/nv-ipam/k8s/k8s.h"

#define CIDR_SPEC(extra)                                                                           \
	"\"spec\":{\"cidr\":\"10.8.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1" extra "}"

/* @objs as ipam-node keeps them for host-a. */
static struct json_object **trim_all(const struct k8s_objects *objs)
{
	struct json_object **v = calloc(objs->n_items + 1, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < objs->n_items; i++)
		assert_int_equal(carve_pool_trim(objs->items[i],
						 strcmp(k8s_object_kind(objs->items[i]), "CIDRPool") == 0,
						 "host-a", &v[i]), 0);
	return v;
}

/* @objs as ipam-node keeps them for host-a when it reads their text cut first. */
static struct json_object **skim_trim_all(const struct k8s_objects *objs)
{
	struct json_object **v = calloc(objs->n_items + 1, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < objs->n_items; i++) {
		bool cidrpool = strcmp(k8s_object_kind(objs->items[i]), "CIDRPool") == 0;
		/* Text as the API server sends it ('/' not escaped), and spaced: the cut reads either. */
		const char *text = json_object_to_json_string_ext(
			objs->items[i], JSON_C_TO_STRING_NOSLASHESCAPE |
						(i % 2 ? JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN));
		struct json_object *o = NULL;
		struct cni_err err = { 0 };
		char *cut = NULL;
		size_t cut_len = 0;
		int r = carve_status_skim(text, strlen(text), "host-a", cidrpool, &cut, &cut_len);

		assert_true(r >= 0);
		assert_int_equal(r ? cjson_parse(cut, cut_len, "cut", &o, &err) :
				     cjson_parse(text, strlen(text), "whole", &o, &err), 0);
		assert_int_equal(carve_pool_trim(o, cidrpool, "host-a", &v[i]), 0);
		json_object_put(o);
		free(cut);
	}
	return v;
}

static void render_objs(const struct k8s_objects *objs, char **ret_text, char **ret_notes)
{
	struct cni_err err = { 0 };
	size_t len = 0;
	FILE *notes = open_memstream(ret_notes, &len);

	assert_non_null(notes);
	if (nodefile_render(objs, "host-a", ret_text, notes, &err) < 0)
		fail_msg("nodefile_render: %s", err.msg);
	assert_int_equal(fclose(notes), 0);
}

/* The file host-a gets from @json, and the notes about pools left out; the same trimmed. */
static void render(const char *json, char **ret_text, char **ret_notes)
{
	struct k8s_objects objs = { 0 }, trimmed[2];
	struct cni_err err = { 0 };

	if (k8s_objects_parse(json, strlen(json), "pools", &objs, &err) < 0)
		fail_msg("k8s_objects_parse: %s", err.msg);
	trimmed[0] = (struct k8s_objects){ .items = trim_all(&objs), .n_items = objs.n_items };
	trimmed[1] = (struct k8s_objects){ .items = skim_trim_all(&objs), .n_items = objs.n_items };
	render_objs(&objs, ret_text, ret_notes);
	for (size_t k = 0; k < 2; k++) {
		char *text = NULL, *notes = NULL;

		render_objs(&trimmed[k], &text, &notes);
		assert_string_equal(text, *ret_text);
		assert_string_equal(notes, *ret_notes);
		free(text);
		free(notes);
		for (size_t i = 0; i < trimmed[k].n_items; i++)
			json_object_put(trimmed[k].items[i]);
		free(trimmed[k].items);
	}
	k8s_objects_free(&objs);
}

static bool has_pool(const char *text, const char *key)
{
	struct json_object *o = json_tokener_parse(text), *pools = NULL;
	bool has = json_object_object_get_ex(o, "pools", &pools) &&
		   json_object_object_get_ex(pools, key, NULL);

	json_object_put(o);
	return has;
}

/* @ok is taken; @refused is left out with a note holding @why. */
static void taken_and_refused(const char *ok, const char *refused, const char *key, const char *why)
{
	char *text = NULL, *notes = NULL;

	render(ok, &text, &notes);
	if (!has_pool(text, key))
		fail_msg("the accepted entry is not in the file:\n%s\nnotes: %s", text, notes);
	assert_string_equal(notes, "");
	free(text);
	free(notes);
	render(refused, &text, &notes);
	if (has_pool(text, key))
		fail_msg("the refused entry is in the file:\n%s", text);
	if (!strstr(notes, why))
		fail_msg("notes \"%s\" do not say \"%s\"", notes, why);
	free(text);
	free(notes);
}

#define CIDR_POOL(spec, allocs)                                                                    \
	"{\"kind\":\"CIDRPool\",\"metadata\":{\"name\":\"c1\"}," spec                              \
	",\"status\":{\"allocations\":[" allocs "]}}"

/* Reference: "doesn't match computed gateway 10.8.1.1". A pod was handed 10.8.1.9 as gateway. */
static void test_cidr_gateway_not_the_index(void **state)
{
	(void)state;
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.9\"}"),
		"cidrpool/c1", "gateway 10.8.1.9 doesn't match the gateway 10.8.1.1 of gatewayIndex");
}

/* Reference: a missing gateway doesn't match the computed one either. */
static void test_cidr_gateway_missing(void **state)
{
	(void)state;
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\"}"),
		"cidrpool/c1", "gateway (none) doesn't match the gateway 10.8.1.1");
	/* Without gatewayIndex the reference expects none ("gateway expected to be empty"). */
	taken_and_refused(
		CIDR_POOL("\"spec\":{\"cidr\":\"10.8.0.0/16\",\"perNodeNetworkPrefix\":24}",
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\"}"),
		CIDR_POOL("\"spec\":{\"cidr\":\"10.8.0.0/16\",\"perNodeNetworkPrefix\":24}",
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		"cidrpool/c1", "gateway 10.8.1.1 given, but the pool has no gatewayIndex");
}

/* Reference: "prefix size doesn't match spec.perNodeNetworkPrefix". */
static void test_cidr_wrong_prefix_size(void **state)
{
	(void)state;
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.4.0/24\",\"gateway\":\"10.8.4.1\"}"),
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.4.0/23\",\"gateway\":\"10.8.4.1\"}"),
		"cidrpool/c1", "its prefix is not a /24 inside the pool's cidr");
}

/*
 * Reference: "conflicting allocation found in the pool": no other entry may share the prefix
 * (nor the gateway, nor the node). Two nodes were handed addresses from one prefix.
 */
static void test_cidr_prefix_given_twice(void **state)
{
	(void)state;
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"},"
					 "{\"nodeName\":\"host-b\",\"prefix\":\"10.8.2.0/24\",\"gateway\":\"10.8.2.1\"}"),
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"},"
					 "{\"nodeName\":\"host-b\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		"cidrpool/c1", "its prefix is also given to node host-b");
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"},"
					 "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.3.0/24\",\"gateway\":\"10.8.3.1\"}"),
		"cidrpool/c1", "the node has two allocations");
}

/*
 * Reference: "is statically allocated for different node" (a staticAllocations entry of
 * another node, or one without a node, which only reserves the prefix).
 */
static void test_cidr_prefix_reserved(void **state)
{
	(void)state;
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(",\"staticAllocations\":[{\"nodeName\":\"host-b\",\"prefix\":\"10.8.9.0/24\"}]"),
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		CIDR_POOL(CIDR_SPEC(",\"staticAllocations\":[{\"nodeName\":\"host-b\",\"prefix\":\"10.8.9.0/24\"}]"),
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.9.0/24\",\"gateway\":\"10.8.9.1\"}"),
		"cidrpool/c1", "prefix 10.8.9.0/24 is statically allocated for different node: host-b");
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(",\"staticAllocations\":[{\"prefix\":\"10.8.9.0/24\"}]"),
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		CIDR_POOL(CIDR_SPEC(",\"staticAllocations\":[{\"prefix\":\"10.8.9.0/24\"}]"),
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.9.0/24\",\"gateway\":\"10.8.9.1\"}"),
		"cidrpool/c1", "statically allocated without a node (reserved)");
	/* The node's own static allocation must be the prefix it got ("doesn't match prefix"). */
	taken_and_refused(
		CIDR_POOL(CIDR_SPEC(",\"staticAllocations\":[{\"nodeName\":\"host-a\",\"prefix\":\"10.8.9.0/24\",\"gateway\":\"10.8.9.7\"}]"),
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.9.0/24\",\"gateway\":\"10.8.9.7\"}"),
		CIDR_POOL(CIDR_SPEC(",\"staticAllocations\":[{\"nodeName\":\"host-a\",\"prefix\":\"10.8.9.0/24\",\"gateway\":\"10.8.9.7\"}]"),
			  "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"}"),
		"cidrpool/c1", "doesn't match prefix 10.8.9.0/24 from the node's static allocation");
}

#define IP_POOL(gateway)                                                                           \
	"{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"p1\"},\"spec\":{\"subnet\":\"192.168.0.0/24\","     \
	"\"perNodeBlockSize\":16,\"gateway\":\"" gateway "\"},\"status\":{\"allocations\":["         \
	"{\"nodeName\":\"host-a\",\"startIP\":\"192.168.0.1\",\"endIP\":\"192.168.0.16\"}]}}"

/* Reference: IPPool.Validate(), "is not part of the subnet" (the controller empties the status). */
static void test_ippool_gateway_outside_subnet(void **state)
{
	(void)state;
	taken_and_refused(IP_POOL("192.168.0.1"), IP_POOL("192.168.1.1"), "p1",
			  "invalid spec: \"gateway\" 192.168.1.1 is outside subnet 192.168.0.0/24");
}

/* A refused pool goes alone: the others stay, and the file still loads. */
static void test_refusal_keeps_the_rest(void **state)
{
	char *text = NULL, *notes = NULL;

	(void)state;
	render("[" IP_POOL("192.168.0.1") ","
	       CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.9\"}") "]",
	       &text, &notes);
	assert_true(has_pool(text, "p1"));
	assert_false(has_pool(text, "cidrpool/c1"));
	assert_non_null(strstr(notes, "skipping pool \"cidrpool/c1\": gateway 10.8.1.9"));
	free(text);
	free(notes);
}

/* The entries of @json's pool @i that trimming keeps for host-a, as "node:prefix-or-start,". */
static void trimmed_entries(const char *json, size_t i, char *buf, size_t len)
{
	struct k8s_objects objs = { 0 };
	struct cni_err err = { 0 };
	struct json_object **v, *arr;
	size_t off = 0;

	if (k8s_objects_parse(json, strlen(json), "pools", &objs, &err) < 0)
		fail_msg("k8s_objects_parse: %s", err.msg);
	v = trim_all(&objs);
	arr = k8s_object_member(v[i], "status", "allocations");
	buf[0] = '\0';
	for (size_t k = 0; k < json_object_array_length(arr); k++) {
		struct json_object *e = json_object_array_get_idx(arr, k);
		struct json_object *at = k8s_object_member(e, "prefix", NULL);

		off += (size_t)snprintf(buf + off, len - off, "%s:%s,",
					json_object_get_string(k8s_object_member(e, "nodeName", NULL)),
					json_object_get_string(at ? at : k8s_object_member(e, "startIP", NULL)));
	}
	for (size_t k = 0; k < objs.n_items; k++)
		json_object_put(v[k]);
	free(v);
	k8s_objects_free(&objs);
}

/*
 * ipam-node keeps of each pool only host-a's entries, and of a CIDRPool the others that
 * make it refuse host-a's (the same prefix or gateway), in their order; the file is the same.
 */
static void test_trim_keeps_the_node_entries(void **state)
{
	const char *pools =
		"[{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"ns\",\"uid\":\"u\"},"
		"\"spec\":{\"subnet\":\"192.168.0.0/24\",\"perNodeBlockSize\":16,\"gateway\":\"192.168.0.1\"},"
		"\"status\":{\"allocations\":["
		"{\"nodeName\":\"host-b\",\"startIP\":\"192.168.0.17\",\"endIP\":\"192.168.0.32\"},"
		"{\"nodeName\":\"host-a\",\"startIP\":\"192.168.0.1\",\"endIP\":\"192.168.0.16\"},"
		"{\"nodeName\":\"host-c\",\"startIP\":\"192.168.0.1\",\"endIP\":\"192.168.0.16\"}]}},"
		CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-b\",\"prefix\":\"10.8.2.0/24\",\"gateway\":\"10.8.2.1\"},"
					 "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"},"
					 "{\"nodeName\":\"host-c\",\"prefix\":\"10.8.3.0/24\",\"gateway\":\"10.8.3.1\"}") ","
		"{\"kind\":\"CIDRPool\",\"metadata\":{\"name\":\"c2\"}," CIDR_SPEC("")
		",\"status\":{\"allocations\":["
		"{\"nodeName\":\"host-d\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"},"
		"{\"nodeName\":\"host-b\",\"prefix\":\"10.8.2.0/24\",\"gateway\":\"10.8.2.1\"},"
		"{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"},"
		"{\"nodeName\":\"host-c\",\"prefix\":\"10.8.3.0/24\",\"gateway\":\"10.8.3.1\"}]}}]";
	char buf[512], *text = NULL, *notes = NULL;

	(void)state;
	/* host-c's block overlaps host-a's in the IPPool: the loader checks that, not this node. */
	trimmed_entries(pools, 0, buf, sizeof(buf));
	assert_string_equal(buf, "host-a:192.168.0.1,");
	trimmed_entries(pools, 1, buf, sizeof(buf));
	assert_string_equal(buf, "host-a:10.8.1.0/24,");
	trimmed_entries(pools, 2, buf, sizeof(buf));
	assert_string_equal(buf, "host-d:10.8.1.0/24,host-a:10.8.1.0/24,");
	render(pools, &text, &notes);
	assert_true(has_pool(text, "p1"));
	assert_true(has_pool(text, "cidrpool/c1"));
	assert_false(has_pool(text, "cidrpool/c2"));
	assert_non_null(strstr(notes, "its prefix is also given to node host-d"));
	free(text);
	free(notes);
	/*
	 * An API object's keys are exact: "NodeName" names no node, so host-a has one entry,
	 * and its pool is written.
	 */
	render(CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"host-a\",\"prefix\":\"10.8.1.0/24\",\"gateway\":\"10.8.1.1\"},"
					"{\"NodeName\":\"host-a\",\"prefix\":\"10.8.5.0/24\",\"gateway\":\"10.8.5.1\"}"),
	       &text, &notes);
	assert_null(strstr(notes, "the node has two allocations"));
	assert_non_null(strstr(text, "10.8.1.0/24"));
	assert_null(strstr(text, "10.8.5.0/24"));
	free(text);
	free(notes);
}

/*
 * An entry without "nodeName" (here one keyed "NodeName", another member in an API object)
 * is node ""'s to the check: trimming for node "", whose entry makes the check read the
 * others, keeps it beside that entry, and drops host-b's.
 */
static void test_trim_unnamed_entry(void **state)
{
	const char *json = CIDR_POOL(CIDR_SPEC(""), "{\"nodeName\":\"\",\"prefix\":\"10.8.1.0/24\"},"
						"{\"NodeName\":\"host-a\",\"prefix\":\"10.8.5.0/24\"},"
						"{\"nodeName\":\"host-b\",\"prefix\":\"10.8.2.0/24\"}");
	struct k8s_objects objs = { 0 };
	struct cni_err err = { 0 };
	struct json_object *kept = NULL, *arr;
	char buf[128];
	size_t off = 0;

	(void)state;
	assert_int_equal(k8s_objects_parse(json, strlen(json), "pools", &objs, &err), 0);
	assert_int_equal(carve_pool_trim(objs.items[0], true, "", &kept), 0);
	arr = k8s_object_member(kept, "status", "allocations");
	buf[0] = '\0';
	for (size_t k = 0; k < json_object_array_length(arr); k++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s,",
					json_object_get_string(k8s_object_member(
						json_object_array_get_idx(arr, k), "prefix", NULL)));
	assert_string_equal(buf, "10.8.1.0/24,10.8.5.0/24,");
	json_object_put(kept);
	k8s_objects_free(&objs);
}

/* The node names of the allocations of @text's pool (or of its "object"), as "a,b,". */
static void cut_names(const char *text, size_t len, char *buf, size_t size)
{
	struct json_object *o = NULL, *pool, *arr;
	struct cni_err err = { 0 };
	size_t off = 0;

	assert_int_equal(cjson_parse(text, len, "cut", &o, &err), 0);
	pool = k8s_object_member(o, "object", NULL) ? k8s_object_member(o, "object", NULL) : o;
	arr = k8s_object_member(pool, "status", "allocations");
	buf[0] = '\0';
	for (size_t k = 0; k < json_object_array_length(arr); k++)
		off += (size_t)snprintf(buf + off, size - off, "%s,",
					json_object_get_string(k8s_object_member(
						json_object_array_get_idx(arr, k), "nodeName", NULL)));
	json_object_put(o);
}

/*
 * The text cut before parsing keeps host-a's entries, those whose name is escaped, and of
 * a CIDRPool those whose prefix or gateway is host-a's however written; in a watch event
 * too; a text with nothing to drop, or that is not JSON's shape, is left whole.
 */
static void test_skim_cuts_to_the_node(void **state)
{
	const char *ippool =
		"{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"p1\"},\"spec\":{\"subnet\":\"192.168.0.0/24\","
		"\"perNodeBlockSize\":16},\"status\":{\"allocations\": [ "
		"{\"nodeName\":\"host-b\",\"startIP\":\"192.168.0.17\",\"endIP\":\"192.168.0.32\"} , "
		"{\"nodeName\":\"host-a\",\"startIP\":\"192.168.0.1\",\"endIP\":\"192.168.0.16\"},"
		"{\"nodeName\":\"host-\\u0061\",\"startIP\":\"192.168.0.33\",\"endIP\":\"192.168.0.48\"},"
		"{\"nodeName\":\"host-c\",\"startIP\":\"192.168.0.49\",\"endIP\":\"192.168.0.64\"} ]}}";
	const char *event =
		"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"CIDRPool\",\"metadata\":{\"name\":\"c6\"},"
		"\"spec\":{\"cidr\":\"fd00:8::/48\",\"perNodeNetworkPrefix\":64,\"gatewayIndex\":1},"
		"\"status\":{\"allocations\":["
		"{\"nodeName\":\"host-b\",\"prefix\":\"fd00:8:0:2::/64\",\"gateway\":\"fd00:8:0:2::1\"},"
		"{\"nodeName\":\"host-d\",\"prefix\":\"fd00:8:0:1:0::/64\",\"gateway\":\"fd00:8:0:4::1\"},"
		"{\"nodeName\":\"host-a\",\"prefix\":\"fd00:8:0:1::/64\",\"gateway\":\"fd00:8:0:1::1\"},"
		"{\"nodeName\":\"host-e\",\"PREFIX\":\"fd00:8:0:5::/64\",\"Gateway\":\"fd00:8:0:1:0:0:0:1\"},"
		"{\"nodeName\":\"host-g\",\"prefix\":\"fd00:8:0:7::/64\",\"gateway\":\"fd00:8:0:1:0:0:0:1\"},"
		"{\"nodeName\":\"host-f\",\"prefix\":\"fd00:8:0:6::/64\",\"gateway\":\"fd00:8:0:6::1\"}]}}}";
	const char *none = "{\"status\":{\"allocations\":[{\"nodeName\":\"host-a\"}]}}";
	const char *broken = "{\"status\":{\"allocations\":[{\"nodeName\":\"host-b\"},{\"nodeName\":]}}";
	char *cut = NULL, buf[256];
	size_t len = 0;

	(void)state;
	assert_int_equal(carve_status_skim(ippool, strlen(ippool), "host-a", false, &cut, &len), 1);
	cut_names(cut, len, buf, sizeof(buf));
	assert_string_equal(buf, "host-a,host-a,");
	free(cut);
	/* As an IPPool, only the names count: the CIDRPool's clashes are read for a CIDRPool. */
	assert_int_equal(carve_status_skim(event, strlen(event), "host-a", false, &cut, &len), 1);
	cut_names(cut, len, buf, sizeof(buf));
	assert_string_equal(buf, "host-a,");
	free(cut);
	assert_int_equal(carve_status_skim(event, strlen(event), "host-a", true, &cut, &len), 1);
	cut_names(cut, len, buf, sizeof(buf));
	/* host-e's clash is under keys of another case, which an API object's reader does not read. */
	assert_string_equal(buf, "host-d,host-a,host-g,");
	free(cut);
	/* Another node: host-b's, and nothing clashes with it. */
	assert_int_equal(carve_status_skim(event, strlen(event), "host-b", true, &cut, &len), 1);
	cut_names(cut, len, buf, sizeof(buf));
	assert_string_equal(buf, "host-b,");
	free(cut);
	cut = NULL;
	assert_int_equal(carve_status_skim(none, strlen(none), "host-a", false, &cut, &len), 0);
	assert_int_equal(carve_status_skim(broken, strlen(broken), "host-a", false, &cut, &len), 0);
	assert_int_equal(carve_status_skim(broken, 20, "host-a", true, &cut, &len), 0);
	assert_null(cut);
}

/* "{"nodeName":"NAME","x":" + DEPTH brackets + "}": an entry nested DEPTH levels deeper. */
static char *deep_entry(const char *name, size_t depth, const char *open, const char *close)
{
	struct text_buf b = { 0 };

	text_buf_puts(&b, "{\"nodeName\":\"");
	text_buf_puts(&b, name);
	text_buf_puts(&b, "\",\"startIP\":\"192.168.0.17\",\"endIP\":\"192.168.0.32\",\"x\":");
	for (size_t i = 0; i < depth; i++)
		text_buf_puts(&b, open);
	text_buf_puts(&b, "1");
	for (size_t i = 0; i < depth; i++)
		text_buf_puts(&b, close);
	text_buf_puts(&b, "}");
	text_buf_putc(&b, '\0');
	assert_false(b.oom);
	return b.data;
}

/*
 * Another node's entry nested past the parser's depth limit (issue 45: one such entry made
 * every pool list unreadable, and a fresh ipam-node never ready): the cut drops it, however
 * deep (no recursion: 100,000 levels), and the node's block is read; the node's own entry
 * that deep is the parser's to refuse; an entry whose brackets do not match is never
 * dropped (the parser refuses the text).
 */
static void test_skim_drops_deep_entries(void **state)
{
	static const char *const shapes[][2] = { { "[", "]" }, { "{\"a\":", "}" } };
	struct json_object *o = NULL;
	struct cni_err err = { 0 };
	char *cut = NULL, buf[256];
	size_t len = 0;

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		_cleanup_free_ char *deep = deep_entry("host-b", 100000, shapes[k][0], shapes[k][1]);
		_cleanup_free_ char *mine = deep_entry("host-a", CNI_JSON_MAX_DEPTH, shapes[k][0], shapes[k][1]);
		_cleanup_free_ char *pool = NULL, *pool2 = NULL, *odd = NULL;

		assert_true(asprintf(&pool, "{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"p1\"},"
				     "\"spec\":{\"subnet\":\"192.168.0.0/24\",\"perNodeBlockSize\":16},"
				     "\"status\":{\"allocations\":[%s,{\"nodeName\":\"host-a\",\"startIP\":"
				     "\"192.168.0.1\",\"endIP\":\"192.168.0.16\"}]}}", deep) > 0);
		assert_int_not_equal(cjson_parse(pool, strlen(pool), "whole", &o, &err), 0);
		assert_int_equal(carve_status_skim(pool, strlen(pool), "host-a", false, &cut, &len), 1);
		cut_names(cut, len, buf, sizeof(buf));
		assert_string_equal(buf, "host-a,");
		free(cut);
		cut = NULL;
		/* The node's own entry that deep: left for the parser to refuse. */
		assert_true(asprintf(&pool2, "{\"status\":{\"allocations\":[%s]}}", mine) > 0);
		assert_int_equal(carve_status_skim(pool2, strlen(pool2), "host-a", false, &cut, &len), 0);
		/* Brackets that do not match, deep in another node's entry: not dropped. */
		assert_true(asprintf(&odd, "{\"status\":{\"allocations\":[{\"nodeName\":\"host-b\",\"x\":"
				     "[[[{\"a\":1]]]}},{\"nodeName\":\"host-a\"}]}}") > 0);
		assert_int_equal(carve_status_skim(odd, strlen(odd), "host-a", false, &cut, &len), 0);
		assert_null(cut);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cidr_gateway_not_the_index),
		cmocka_unit_test(test_cidr_gateway_missing),
		cmocka_unit_test(test_cidr_wrong_prefix_size),
		cmocka_unit_test(test_cidr_prefix_given_twice),
		cmocka_unit_test(test_cidr_prefix_reserved),
		cmocka_unit_test(test_ippool_gateway_outside_subnet),
		cmocka_unit_test(test_refusal_keeps_the_rest),
		cmocka_unit_test(test_trim_keeps_the_node_entries),
		cmocka_unit_test(test_trim_unnamed_entry),
		cmocka_unit_test(test_skim_cuts_to_the_node),
		cmocka_unit_test(test_skim_drops_deep_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
