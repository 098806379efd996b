/*
 * Unit tests: the validating webhook's AdmissionReview answers, a table of requests allowed
 * and denied as the reference's rules say; a denial names the field. Each pool of the table
 * is also carved: carve refuses exactly the specs the webhook denies, but for the rows
 * marked, whose selectors match no node either way (the status is [] all the same).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/util/error.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/controller/admission.h"
#include "ipam/nv-ipam/controller/overlap_events.h"
#include "ipam/nv-ipam/controller/overlap_hook.h"
#include "ipam/nv-ipam/controller/validate.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "tests/unit/compare-count.h"

#define IP ADMISSION_PATH_IPPOOL
#define CP ADMISSION_PATH_CIDRPOOL

struct row {
	const char *path;
	const char *name;
	const char *spec;     /* the spec's members */
	bool allowed;
	const char *want[3];  /* pieces of the denial's message, in order */
	bool carve_differs;   /* the controller judges this spec otherwise (see the row) */
};

#define OK(p, spec) { p, "pool1", spec, true, { NULL }, false }
#define NO(p, spec, ...) { p, "pool1", spec, false, { __VA_ARGS__ }, false }

static const struct row rows[] = {
	/* ---- IPPool ---- */
	OK(IP, "\"subnet\":\"192.168.0.0/16\",\"perNodeBlockSize\":24,\"gateway\":\"192.168.0.1\""),
	OK(IP, "\"subnet\":\"fd52:2eb5:44::/48\",\"perNodeBlockSize\":100,\"gateway\":\"fd52:2eb5:44::1\""),
	OK(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":254"),
	OK(IP, "\"subnet\":\"10.0.0.0/31\",\"perNodeBlockSize\":2"),
	OK(IP, "\"subnet\":\"10.0.0.7/32\",\"perNodeBlockSize\":1"),
	OK(IP, "\"subnet\":\"10.0.0.5/24\",\"perNodeBlockSize\":4"), /* host bits are fine for an IPPool */
	OK(IP, "\"subnet\":\"192.168.0.0/16\",\"perNodeBlockSize\":128,\"gateway\":\"192.168.0.1\","
	       "\"exclusions\":[{\"startIP\":\"192.168.0.200\",\"endIP\":\"192.168.0.200\"}],"
	       "\"perNodeExclusions\":[{\"startIndex\":0,\"endIndex\":9}]"),
	OK(IP, "\"subnet\":\"192.168.0.0/16\",\"perNodeBlockSize\":24,\"gateway\":\"192.168.0.1\","
	       "\"defaultGateway\":true,\"routes\":[{\"dst\":\"5.5.0.0/24\"}]"),
	OK(IP, "\"subnet\":\"10.0.0.0/16\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	       "[{\"matchExpressions\":[{\"key\":\"node-role.kubernetes.io/worker\",\"operator\":\"Exists\"}]},"
	       "{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"node-1\"]}]}]}"),
	NO(IP, "\"subnet\":\"10.0.0.0/33\",\"perNodeBlockSize\":4",
	   "spec.subnet: Invalid value: \"10.0.0.0/33\": is not a valid CIDR"),
	NO(IP, "\"perNodeBlockSize\":4", "spec.subnet: Invalid value: \"\""),
	NO(IP, "\"subnet\":\"10.0.0.0/24\"", "spec.perNodeBlockSize: Invalid value: 0: must be at least 1"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":-3", "spec.perNodeBlockSize: Invalid value: -3"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":255",
	   "spec.perNodeBlockSize: Invalid value: 255: is larger than the number of usable addresses"),
	NO(IP, "\"subnet\":\"10.0.0.0/31\",\"perNodeBlockSize\":3", "spec.perNodeBlockSize: Invalid value: 3"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":\"4\"",
	   "spec.perNodeBlockSize: Invalid value: \"4\": must be an integer"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.0.1.1\"",
	   "spec.gateway: Invalid value: \"10.0.1.1\": is not part of the subnet"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.0.0.x\"",
	   "spec.gateway: Invalid value: \"10.0.0.x\": is not a valid IP address"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"exclusions\":"
	       "[{\"startIP\":\"10.0.0.10\",\"endIP\":\"10.0.1.5\"}]",
	   "spec.exclusions[0].endIP: Invalid value: \"10.0.1.5\": is not part of the 10.0.0.0/24 subnet"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"exclusions\":"
	       "[{\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.2\"},{\"startIP\":\"10.0.0.9\",\"endIP\":\"10.0.0.5\"}]",
	   "spec.exclusions[1]: Invalid value: {\"startIP\":\"10.0.0.9\",\"endIP\":\"10.0.0.5\"}: "
	   "endIP should be equal or greater than startIP"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"exclusions\":[{\"endIP\":\"10.0.0.5\"}]",
	   "spec.exclusions[0].startIP: Invalid value: \"\": is not a valid IP address"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"perNodeExclusions\":"
	       "[{\"startIndex\":2,\"endIndex\":4}]",
	   "spec.perNodeExclusions[0].endIndex: Invalid value: 4: index is outside of the per-node block range (max: 3)"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"perNodeExclusions\":"
	       "[{\"startIndex\":2,\"endIndex\":1}]",
	   "spec.perNodeExclusions[0]: Invalid value: {\"startIndex\":2,\"endIndex\":1}: endIndex must be greater"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"perNodeExclusions\":"
	       "[{\"startIndex\":-1,\"endIndex\":1}]",
	   "spec.perNodeExclusions[0].startIndex: Invalid value: -1: must be non-negative"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"defaultGateway\":true",
	   "spec.defaultGateway: Invalid value: true: cannot be true if spec.gateway is not set"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"routes\":[{\"dst\":\"5.5.0.0/24\"}]",
	   "spec.routes: Invalid value: [{\"dst\":\"5.5.0.0/24\"}]: cannot be set if spec.gateway is not set"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.0.0.1\","
	       "\"routes\":[{\"dst\":\"fd00::/64\"}]",
	   "spec.routes[0].dst: Invalid value: \"fd00::/64\": is not of the pool's address family"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.0.0.1\","
	       "\"routes\":[{\"dst\":\"5.5.5.0\"}]",
	   "spec.routes[0].dst: Invalid value: \"5.5.5.0\": is not a valid CIDR"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.0.0.1\","
	       "\"defaultGateway\":true,\"routes\":[{\"dst\":\"0.0.0.0/0\"}]",
	   "spec.routes[0].dst: Invalid value: \"0.0.0.0/0\": a default route is not allowed"),
	/*
	 * carve takes an empty term list and a label key that is no label name (neither ever
	 * matches a node, so the status is [] all the same); the controller decides InvalidSpec
	 * with these rules, not carve's.
	 */
	{ IP, "pool1", "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":[]}",
	  false, { "spec.nodeSelectorTerms: Required value: must have at least one node selector term" }, true },
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	       "[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\"}]}]}",
	   "spec.nodeSelectorTerms[0].matchExpressions[0].values: Required value"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	       "[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Exists\",\"values\":[\"x\"]}]}]}",
	   "spec.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	       "[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"Near\",\"values\":[\"x\"]}]}]}",
	   "spec.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Near\": not a valid selector operator"),
	{ IP, "pool1", "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	  "[{\"matchExpressions\":[{\"key\":\"-bad-\",\"operator\":\"Exists\"}]}]}", false,
	  { "spec.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: \"-bad-\": name part must consist" }, true },
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	       "[{\"matchFields\":[{\"key\":\"metadata.labels\",\"operator\":\"In\",\"values\":[\"x\"]}]}]}",
	   "spec.nodeSelectorTerms[0].matchFields[0].key: Invalid value: \"metadata.labels\": not a valid field selector key"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	       "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}]}",
	   "spec.nodeSelectorTerms[0].matchFields[0].values: Required value: must be exactly one value"),
	/* Several errors at once: all of them, in spec order, within brackets. */
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":0,\"gateway\":\"10.9.0.1\"",
	   "[spec.perNodeBlockSize: Invalid value: 0: must be at least 1, ",
	   "spec.gateway: Invalid value: \"10.9.0.1\": is not part of the subnet]"),
	{ IP, "pool_1!", "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4", false,
	  { "metadata.name: Invalid value: \"pool_1!\": invalid IP pool name" }, false },
	/*
	 * Gt with a value that is no integer: the reference accepts the selector (its matching
	 * fails, node by node, so no node matches); the controller's carve refuses the spec.
	 * Either way no node gets a block.
	 */
	{ IP, "pool1", "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"nodeSelector\":{\"nodeSelectorTerms\":"
	  "[{\"matchExpressions\":[{\"key\":\"rank\",\"operator\":\"Gt\",\"values\":[\"high\"]}]}]}", true,
	  { NULL }, true },

	/* ---- CIDRPool ---- */
	OK(CP, "\"cidr\":\"192.168.0.0/16\",\"gatewayIndex\":1,\"perNodeNetworkPrefix\":24"),
	OK(CP, "\"cidr\":\"192.168.100.0/24\",\"perNodeNetworkPrefix\":31"),
	OK(CP, "\"cidr\":\"10.0.0.0/31\",\"perNodeNetworkPrefix\":32,\"gatewayIndex\":0"),
	OK(CP, "\"cidr\":\"fd00::/48\",\"perNodeNetworkPrefix\":64,\"gatewayIndex\":1,\"defaultGateway\":true,"
	       "\"routes\":[{\"dst\":\"fd01::/64\"}]"),
	OK(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":254"),
	OK(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,\"staticAllocations\":"
	       "[{\"nodeName\":\"node-2\",\"prefix\":\"10.0.5.0/24\",\"gateway\":\"10.0.5.9\"},{\"prefix\":\"10.0.7.0/24\"}]"),
	NO(CP, "\"cidr\":\"10.0.0.1/16\",\"perNodeNetworkPrefix\":24",
	   "spec.cidr: Invalid value: \"10.0.0.1/16\": network prefix has host bits set"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":8",
	   "spec.perNodeNetworkPrefix: Invalid value: 8: must be between"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":33",
	   "spec.perNodeNetworkPrefix: Invalid value: 33"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\"", "spec.perNodeNetworkPrefix: Invalid value: 0"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":-1",
	   "spec.gatewayIndex: Invalid value: -1: must not be negative"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":0",
	   "spec.gatewayIndex: Invalid value: 0: gateway index is outside of the node prefix"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":255",
	   "spec.gatewayIndex: Invalid value: 255: gateway index is outside of the node prefix"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"perNodeExclusions\":"
	       "[{\"startIndex\":0,\"endIndex\":256}]",
	   "spec.perNodeExclusions[0].endIndex: Invalid value: 256: index is outside of the per-node subnet range (max: 255)"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"exclusions\":"
	       "[{\"startIP\":\"10.1.0.0\",\"endIP\":\"10.0.0.5\"}]",
	   "spec.exclusions[0].startIP: Invalid value: \"10.1.0.0\": is not part of the 10.0.0.0/16 subnet",
	   "spec.exclusions[0]: Invalid value:"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
	       "[{\"nodeName\":\"a\",\"prefix\":\"10.0.1.0/25\"}]",
	   "spec.staticAllocations[0].prefix: Invalid value: \"10.0.1.0/25\": prefix size doesn't match spec.perNodeNetworkPrefix"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
	       "[{\"nodeName\":\"a\",\"prefix\":\"10.1.1.0/24\"}]",
	   "spec.staticAllocations[0].prefix: Invalid value: \"10.1.1.0/24\": prefix is not part of the pool cidr"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
	       "[{\"nodeName\":\"a\",\"prefix\":\"10.0.1.1/24\"}]",
	   "spec.staticAllocations[0].prefix: Invalid value: \"10.0.1.1/24\": network prefix has host bits set"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
	       "[{\"nodeName\":\"a\",\"prefix\":\"10.0.1.0/24\",\"gateway\":\"10.0.2.1\"}]",
	   "spec.staticAllocations[0].gateway: Invalid value: \"10.0.2.1\": is outside of the node prefix"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
	       "[{\"nodeName\":\"a\",\"prefix\":\"10.0.1.0/24\"},{\"nodeName\":\"a\",\"prefix\":\"10.0.2.0/24\"}]",
	   "spec.staticAllocations: Invalid value: [", "contains multiple entries for node a"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
	       "[{\"nodeName\":\"a\",\"prefix\":\"10.0.1.0/24\"},{\"prefix\":\"10.0.1.0/24\"}]",
	   "contains multiple entries for prefix 10.0.1.0/24"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"defaultGateway\":true",
	   "spec.defaultGateway: Invalid value: true: cannot be true if spec.gatewayIndex is not set"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"routes\":[{\"dst\":\"10.9.0.0/16\"}]",
	   "spec.routes: Invalid value: [{\"dst\":\"10.9.0.0/16\"}]: cannot be set if spec.gatewayIndex is not set"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,\"defaultGateway\":true,"
	       "\"routes\":[{\"dst\":\"0.0.0.0/0\"}]",
	   "spec.routes[0].dst: Invalid value: \"0.0.0.0/0\": a default route is not allowed"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"nodeSelector\":{}",
	   "spec.nodeSelectorTerms: Required value"),
	NO(CP, "\"cidr\":\"fd00::/64\",\"perNodeNetworkPrefix\":120,\"gatewayIndex\":1,\"routes\":[{\"dst\":\"10.0.0.0/8\"}]",
	   "spec.routes[0].dst: Invalid value: \"10.0.0.0/8\": is not of the pool's address family"),
	{ CP, "cidr pool", "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24", false,
	  { "metadata.name: Invalid value: \"cidr pool\": invalid CIDR pool name" }, false },

	/* ---- an embedded NUL: C would read the string cut short, a valid value ---- */
	NO(IP, "\"subnet\":\"10.0.0.0/24\\u0000junk\",\"perNodeBlockSize\":4",
	   "spec.subnet: Invalid value: \"10.0.0.0/24\\u0000junk\": must not contain a NUL character"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.0.0.1\\u0000\"",
	   "spec.gateway: Invalid value: \"10.0.0.1\\u0000\": must not contain a NUL character"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"exclusions\":"
	       "[{\"startIP\":\"10.0.0.5\",\"endIP\":\"10.0.0.6\\u0000x\"}]",
	   "spec.exclusions[0].endIP: Invalid value: \"10.0.0.6\\u0000x\": must not contain a NUL character"),
	NO(IP, "\"subnet\":\"10.0.0.0/24\",\"perNodeBlockSize\":4,\"gateway\":\"10.0.0.1\","
	       "\"routes\":[{\"dst\":\"5.5.0.0/16\\u0000\"}]",
	   "spec.routes[0].dst: Invalid value: \"5.5.0.0/16\\u0000\": must not contain a NUL character"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\\u0000\",\"perNodeNetworkPrefix\":24",
	   "spec.cidr: Invalid value: \"10.0.0.0/16\\u0000\": must not contain a NUL character"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"exclusions\":"
	       "[{\"startIP\":\"10.0.0.5\\u0000\",\"endIP\":\"10.0.0.6\"}]",
	   "spec.exclusions[0].startIP: Invalid value: \"10.0.0.5\\u0000\": must not contain a NUL character"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,"
	       "\"routes\":[{\"dst\":\"\\u000010.9.0.0/16\"}]",
	   "spec.routes[0].dst: Invalid value: \"\\u000010.9.0.0/16\": must not contain a NUL character"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"staticAllocations\":"
	       "[{\"nodeName\":\"a\\u0000b\",\"prefix\":\"10.0.1.0/24\"}]",
	   "spec.staticAllocations[0].nodeName: Invalid value: \"a\\u0000b\": must not contain a NUL character"),
	NO(CP, "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24,\"nodeSelector\":{\"nodeSelectorTerms\":"
	       "[{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"x\\u0000\"]}]}]}",
	   "spec.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"x\\u0000\": "
	   "must not contain a NUL character"),
	{ CP, "pool\\u0000x", "\"cidr\":\"10.0.0.0/16\",\"perNodeNetworkPrefix\":24", false,
	  { "metadata.name: Invalid value: \"pool\\u0000x\": must not contain a NUL character" }, false },
};

static char *review_for(const struct row *r, const char *op, const char *uid)
{
	const char *kind = strcmp(r->path, CP) == 0 ? "CIDRPool" : "IPPool";
	char *s;

	assert_true(asprintf(&s,
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
		"\"uid\":\"%s\",\"kind\":{\"group\":\"nv-ipam.nvidia.com\",\"version\":\"v1alpha1\",\"kind\":\"%s\"},"
		"\"resource\":{\"group\":\"nv-ipam.nvidia.com\",\"version\":\"v1alpha1\",\"resource\":\"%ss\"},"
		"\"name\":\"%s\",\"namespace\":\"nvidia-network-operator\",\"operation\":\"%s\","
		"\"object\":{\"apiVersion\":\"nv-ipam.nvidia.com/v1alpha1\",\"kind\":\"%s\",\"metadata\":"
		"{\"name\":\"%s\",\"namespace\":\"nvidia-network-operator\"},\"spec\":{%s}}}}",
		uid, kind, strcmp(kind, "IPPool") == 0 ? "ippool" : "cidrpool", r->name, op, kind, r->name,
		r->spec) > 0);
	return s;
}

/* The answer parsed: response.uid, response.allowed, response.status. */
static void answer_fields(const struct admission_answer *a, const char **uid, bool *allowed,
			  int *code, const char **message, struct json_object **root)
{
	struct json_object *resp, *v, *st;

	*root = json_tokener_parse(a->body);
	assert_non_null(*root);
	assert_true(json_object_object_get_ex(*root, "response", &resp));
	assert_true(json_object_object_get_ex(resp, "uid", &v));
	*uid = json_object_get_string(v);
	assert_true(json_object_object_get_ex(resp, "allowed", &v));
	*allowed = json_object_get_boolean(v);
	assert_true(json_object_object_get_ex(resp, "status", &st));
	assert_true(json_object_object_get_ex(st, "code", &v));
	*code = json_object_get_int(v);
	*message = json_object_object_get_ex(st, "message", &v) ? json_object_get_string(v) : NULL;
}

/* Whether carve_pool() refuses the row's pool (an InvalidSpec). */
static bool carve_refuses(const struct row *r)
{
	const char *kind = strcmp(r->path, CP) == 0 ? "CIDRPool" : "IPPool";
	struct carve_node node = { .name = "node-1" };
	struct carve_result res = { 0 };
	struct cni_err err = { 0 };
	struct json_object *pool;
	char *text;
	bool invalid;

	assert_true(asprintf(&text, "{\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"},\"spec\":{%s}}",
			     kind, r->name, r->spec) > 0);
	pool = json_tokener_parse(text);
	assert_non_null(pool);
	assert_int_equal(carve_pool(pool, &node, 1, &res, &err), 0);
	invalid = res.invalid;
	carve_result_free(&res);
	json_object_put(pool);
	free(text);
	return invalid;
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		const char *ops[] = { "CREATE", "UPDATE" };

		for (size_t o = 0; o < 2; o++) {
			struct admission_answer a = { 0 };
			struct json_object *root;
			const char *uid, *msg;
			bool allowed;
			int code;
			char *review = review_for(r, ops[o], "c0ffee-17");
			const char *at;

			assert_int_equal(admission_review(r->path, review, strlen(review), &a), 0);
			assert_int_equal(a.http, 200);
			answer_fields(&a, &uid, &allowed, &code, &msg, &root);
			assert_string_equal(uid, "c0ffee-17");
			if (allowed != r->allowed)
				fail_msg("row %zu (%s): %s, want %s; message: %s", i, r->spec,
					 allowed ? "allowed" : "denied", r->allowed ? "allowed" : "denied",
					 msg ? msg : "(none)");
			assert_int_equal(code, r->allowed ? 200 : 403);
			at = msg;
			for (size_t w = 0; w < 3 && r->want[w]; w++) {
				const char *hit = at ? strstr(at, r->want[w]) : NULL;

				if (!hit)
					fail_msg("row %zu: message\n  %s\nlacks (after what came before)\n  %s", i,
						 msg ? msg : "(none)", r->want[w]);
				at = hit + strlen(r->want[w]);
			}
			assert_true(r->allowed == (a.message == NULL));
			json_object_put(root);
			admission_answer_free(&a);
			free(review);
		}
		if (!r->carve_differs && carve_refuses(r) == r->allowed)
			fail_msg("row %zu (%s): the webhook %s it, carve %s it", i, r->spec,
				 r->allowed ? "allows" : "denies", r->allowed ? "refuses" : "accepts");
		if (r->carve_differs)
			assert_true(carve_refuses(r) == r->allowed);
	}
}

/* DELETE is allowed whatever the object; v1beta1 reviews are answered in v1beta1. */
static void test_delete_and_versions(void **state)
{
	const char *bad = "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
			  "\"request\":{\"uid\":\"u1\",\"operation\":\"DELETE\",\"oldObject\":{\"spec\":{}}}}";
	struct admission_answer a = { 0 };
	struct json_object *root, *v;
	const char *uid, *msg;
	bool allowed;
	int code;

	(void)state;
	assert_int_equal(admission_review(IP, bad, strlen(bad), &a), 0);
	answer_fields(&a, &uid, &allowed, &code, &msg, &root);
	assert_true(allowed);
	assert_string_equal(uid, "u1");
	assert_true(json_object_object_get_ex(root, "apiVersion", &v));
	assert_string_equal(json_object_get_string(v), "admission.k8s.io/v1beta1");
	json_object_put(root);
	admission_answer_free(&a);
}

/* What is no review: 400 with the reason; a kind the path does not take; an unknown path. */
static void test_not_a_review(void **state)
{
	const char *bodies[] = {
		"not json",
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}",
		"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
	};
	const char *wrong_kind = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
				 "\"request\":{\"uid\":\"u2\",\"kind\":{\"kind\":\"CIDRPool\"},\"operation\":\"CREATE\","
				 "\"object\":{\"metadata\":{\"name\":\"p\"},\"spec\":{}}}}";
	struct admission_answer a = { 0 };
	struct json_object *root;
	const char *uid, *msg;
	bool allowed;
	int code;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(admission_review(IP, bodies[i], strlen(bodies[i]), &a), 0);
		assert_int_equal(a.http, 400);
		answer_fields(&a, &uid, &allowed, &code, &msg, &root);
		assert_false(allowed);
		assert_int_equal(code, 400);
		assert_non_null(msg);
		json_object_put(root);
		admission_answer_free(&a);
	}
	assert_int_equal(admission_review(IP, wrong_kind, strlen(wrong_kind), &a), 0);
	answer_fields(&a, &uid, &allowed, &code, &msg, &root);
	assert_false(allowed);
	assert_int_equal(code, 400);
	assert_string_equal(uid, "u2");
	assert_non_null(strstr(msg, "no IPPool object"));
	json_object_put(root);
	admission_answer_free(&a);
	assert_int_equal(admission_review("/validate-something-else", "{}", 2, &a), -ENOENT);
}

/* A hostile name and value stay inside the JSON message, escaped. */
static void test_hostile_strings(void **state)
{
	const char *review = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
			     "{\"uid\":\"u3\",\"operation\":\"CREATE\",\"object\":{\"metadata\":{\"name\":\"p\"},"
			     "\"spec\":{\"subnet\":\"a\\n\\\"b\\u0001\",\"perNodeBlockSize\":1}}}}";
	struct admission_answer a = { 0 };
	struct json_object *root;
	const char *uid, *msg;
	bool allowed;
	int code;

	(void)state;
	assert_int_equal(admission_review(IP, review, strlen(review), &a), 0);
	answer_fields(&a, &uid, &allowed, &code, &msg, &root);
	assert_false(allowed);
	assert_non_null(strstr(msg, "spec.subnet: Invalid value: \"a\\n\\\"b\\u0001\""));
	assert_null(strchr(msg, '\n'));
	json_object_put(root);
	admission_answer_free(&a);
}

/*
 * A CIDRPool review whose staticAllocations list @n nodes: each twice, with a prefix of
 * its own each time (a repeated node and nothing else wrong), or once without a prefix
 * (an error each).
 */
static char *static_review(size_t n, bool twice, size_t *ret_len)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	fprintf(f, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
		"{\"uid\":\"u-many\",\"kind\":{\"kind\":\"CIDRPool\"},\"operation\":\"CREATE\","
		"\"object\":{\"kind\":\"CIDRPool\",\"metadata\":{\"name\":\"pool1\"},\"spec\":"
		"{\"cidr\":\"10.0.0.0/8\",\"perNodeNetworkPrefix\":24,\"gatewayIndex\":1,"
		"\"staticAllocations\":[");
	for (size_t i = 0; i < n; i++) {
		if (twice)
			fprintf(f, "%s{\"nodeName\":\"node-%05zu\",\"prefix\":\"10.%zu.%zu.0/24\"},"
				"{\"nodeName\":\"node-%05zu\",\"prefix\":\"10.%zu.%zu.0/24\"}", i ? "," : "",
				i, 2 * i / 256, 2 * i % 256, i, (2 * i + 1) / 256, (2 * i + 1) % 256);
		else
			fprintf(f, "%s{\"nodeName\":\"node-%05zu\"}", i ? "," : "", i);
	}
	fprintf(f, "]}}}}");
	assert_int_equal(fclose(f), 0);
	*ret_len = size;
	return text;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/*
 * One review of static_review(), the answer in @ret; its comparisons (compare-count.h), and
 * its time in ms, printed only.
 */
static unsigned long review_static(size_t n, bool twice, struct admission_answer *ret)
{
	size_t len;
	char *body = static_review(n, twice, &len);
	double t0 = now_ms();
	unsigned long compares;

	compare_count_reset();
	assert_int_equal(admission_review(CP, body, len, ret), 0);
	compares = compare_count();
	printf("# review of %zu static nodes%s: %lu comparisons, %.1f ms, answer %zu bytes\n", n,
	       twice ? " listed twice" : " without a prefix", compares, now_ms() - t0, ret->len);
	free(body);
	return compares;
}

/*
 * Thousands of repeated or broken static allocations: denied at once with the first ten
 * errors and a count of the rest, each repeated node named once, the answer small (it was
 * 48 MB and 2.3 s for 1,000 repeated nodes).
 */
static void test_many_static_allocations(void **state)
{
	static const struct {
		size_t n;
		bool twice;
	} cases[] = { { 1000, true }, { 3000, true }, { 20000, false } };

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct admission_answer a = { 0 };
		struct json_object *root;
		const char *uid, *msg;
		bool allowed;
		int code;
		char want[96];

		(void)review_static(cases[c].n, cases[c].twice, &a);
		answer_fields(&a, &uid, &allowed, &code, &msg, &root);
		assert_false(allowed);
		assert_int_equal(code, 403);
		assert_string_equal(uid, "u-many");
		assert_true(strlen(msg) <= VALIDATE_MESSAGE_MAX);
		assert_true(a.len <= VALIDATE_MESSAGE_MAX + 512);
		snprintf(want, sizeof(want), ", and %zu more errors]", cases[c].n - VALIDATE_ERRORS_KEPT);
		if (!strstr(msg, want))
			fail_msg("message lacks \"%s\": %s", want, msg);
		assert_int_equal(msg[0], '[');
		if (cases[c].twice) {
			assert_int_equal(count(msg, "contains multiple entries for node"), VALIDATE_ERRORS_KEPT);
			for (size_t i = 0; i < VALIDATE_ERRORS_KEPT; i++) {
				snprintf(want, sizeof(want), "contains multiple entries for node node-%05zu", i);
				assert_int_equal(count(msg, want), 1);
			}
			assert_int_equal(count(msg, "node-00010"), 0);
			assert_int_equal(count(msg, "for prefix"), 0);
			/* The list's value is shown by its first bytes, not whole ten times over. */
			assert_non_null(strstr(msg, "spec.staticAllocations: Invalid value: [{\"nodeName\":"
						    "\"node-00000\",\"prefix\":\"10.0.0.0/24\"},"));
			assert_non_null(strstr(msg, "...: contains multiple entries for node node-00000"));
		} else {
			assert_int_equal(count(msg, "is not a valid network prefix"), VALIDATE_ERRORS_KEPT);
			assert_non_null(strstr(msg, "[spec.staticAllocations[0].prefix: Invalid value: \"\": "
						    "is not a valid network prefix, "));
			assert_non_null(strstr(msg, "spec.staticAllocations[9].prefix"));
			assert_null(strstr(msg, "spec.staticAllocations[10]"));
		}
		json_object_put(root);
		admission_answer_free(&a);
	}
}

/*
 * The review's work grows as n log n, not n^2 (it took 101 s for 3,000 nodes listed twice):
 * counted in comparisons, which no load moves, four times the entries make n log n's
 * 4.65 times as many, a pairwise check of the names or prefixes 16 times.
 */
static void test_review_comparisons_grow_n_log_n(void **state)
{
	unsigned long c[2];
	const size_t n[2] = { 5000, 20000 };

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		struct admission_answer a = { 0 };

		c[k] = review_static(n[k], true, &a);
		assert_int_equal(a.allowed, 0);
		admission_answer_free(&a);
	}
	/* Each entry's name and prefix are compared at least once. */
	assert_true(c[0] >= 2 * n[0]);
	if (c[1] > 6 * c[0])
		fail_msg("4x the entries made %.2fx the comparisons", (double)c[1] / (double)c[0]);
}

/* A value too long for a message is shown by its first bytes; the message stays short. */
static void test_long_values_cut(void **state)
{
	char *long_str = malloc(100001), *spec, *body;
	struct row r = { IP, "pool1", NULL, false, { NULL }, false };
	struct admission_answer a = { 0 };
	struct json_object *root;
	const char *uid, *msg;
	bool allowed;
	int code;

	(void)state;
	assert_non_null(long_str);
	memset(long_str, 'x', 100000);
	long_str[100000] = '\0';
	assert_true(asprintf(&spec, "\"subnet\":\"%s\",\"perNodeBlockSize\":4,\"exclusions\":"
			     "[{\"startIP\":\"10.0.0.1\",\"endIP\":\"10.0.0.1\",\"note\":\"%s\"},1]",
			     long_str, long_str) > 0);
	r.spec = spec;
	body = review_for(&r, "CREATE", "u-long");
	assert_int_equal(admission_review(IP, body, strlen(body), &a), 0);
	answer_fields(&a, &uid, &allowed, &code, &msg, &root);
	assert_false(allowed);
	assert_true(strlen(msg) < 2048);
	assert_non_null(strstr(msg, "spec.subnet: Invalid value: \"xxxxxxxx"));
	assert_non_null(strstr(msg, "xxx\"...: is not a valid CIDR"));
	assert_non_null(strstr(msg, "spec.exclusions[1]: Invalid value: 1: must be an object"));
	json_object_put(root);
	admission_answer_free(&a);
	free(body);
	free(spec);
	free(long_str);
}

static struct json_object *pool_obj(const char *kind, const char *name, const char *prefix)
{
	char text[512];
	struct json_object *o;

	snprintf(text, sizeof(text), "{\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"},\"spec\":"
		 "{\"%s\":\"%s\",\"perNodeBlockSize\":4,\"blockSize\":4,\"perNodePrefix\":28}}",
		 kind, name, strcmp(kind, "CIDRPool") == 0 ? "cidr" : "subnet", prefix);
	o = json_tokener_parse(text);
	assert_non_null(o);
	return o;
}

/* A CREATE review of an IPPool "half" of 192.168.96.0/25. */
static const char half_review[] =
	"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
	"{\"uid\":\"u9\",\"operation\":\"CREATE\",\"kind\":{\"kind\":\"IPPool\"},\"name\":\"half\","
	"\"object\":{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"half\"},"
	"\"spec\":{\"subnet\":\"192.168.96.0/25\",\"perNodeBlockSize\":4}}}}";

/* The response's warnings, joined with "|"; "" when none. */
static void warnings_text(const struct admission_answer *a, char *buf, size_t size)
{
	struct json_object *root = json_tokener_parse(a->body), *resp, *w;
	size_t len = 0;

	assert_non_null(root);
	assert_true(json_object_object_get_ex(root, "response", &resp));
	buf[0] = '\0';
	if (json_object_object_get_ex(resp, "warnings", &w))
		for (size_t i = 0; i < json_object_array_length(w); i++)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "|" : "",
						json_object_get_string(json_object_array_get_idx(w, i)));
	json_object_put(root);
}

/*
 * The case: 192.168.96.0/25 against an IPPool of 192.168.96.0/24 and a CIDRPool
 * inside it is allowed with a warning naming each; its old self (an UPDATE) and pools
 * elsewhere are not named; --reject-overlapping-pools denies it naming them.
 */
static void test_overlap_warned(void **state)
{
	struct json_object *objs[] = {
		pool_obj("IPPool", "wide", "192.168.96.0/24"),
		pool_obj("IPPool", "half", "192.168.96.0/24"),   /* its old self */
		pool_obj("IPPool", "next", "192.168.96.128/25"),
		pool_obj("CIDRPool", "rail", "192.168.96.64/26"),
		pool_obj("CIDRPool", "v6", "fd00::/48"),
	};
	struct admission_pools pools = { .objs = objs, .n = 5 };
	struct admission_answer a = { 0 };
	struct json_object *root;
	const char *uid, *msg;
	char buf[1024];
	bool allowed;
	int code;

	(void)state;
	assert_int_equal(admission_review_pools(IP, half_review, strlen(half_review), &pools, &a), 0);
	answer_fields(&a, &uid, &allowed, &code, &msg, &root);
	assert_true(allowed);
	assert_int_equal(code, 200);
	assert_int_equal(a.warnings, 2);
	warnings_text(&a, buf, sizeof(buf));
	assert_string_equal(buf, "IPPool \"half\" 192.168.96.0/25 overlaps IPPool \"wide\" 192.168.96.0/24|"
			    "IPPool \"half\" 192.168.96.0/25 overlaps CIDRPool \"rail\" 192.168.96.64/26");
	json_object_put(root);
	admission_answer_free(&a);

	pools.reject = true;
	assert_int_equal(admission_review_pools(IP, half_review, strlen(half_review), &pools, &a), 0);
	answer_fields(&a, &uid, &allowed, &code, &msg, &root);
	assert_false(allowed);
	assert_int_equal(code, 403);
	assert_int_equal(a.warnings, 0);
	assert_string_equal(msg, "IPPool \"half\" 192.168.96.0/25 overlaps IPPool \"wide\" 192.168.96.0/24; "
			    "IPPool \"half\" 192.168.96.0/25 overlaps CIDRPool \"rail\" 192.168.96.64/26 "
			    "(--reject-overlapping-pools)");
	warnings_text(&a, buf, sizeof(buf));
	assert_string_equal(buf, "");
	json_object_put(root);
	admission_answer_free(&a);

	/* A pool of another namespace than the pools': not looked at. */
	{
		const char *elsewhere = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
					"\"request\":{\"uid\":\"u7\",\"operation\":\"CREATE\",\"object\":"
					"{\"kind\":\"IPPool\",\"metadata\":{\"name\":\"half\",\"namespace\":\"team\"},"
					"\"spec\":{\"subnet\":\"192.168.96.0/25\",\"perNodeBlockSize\":4}}}}";

		pools.ns = "kube-system";
		assert_int_equal(admission_review_pools(IP, elsewhere, strlen(elsewhere), &pools, &a), 0);
		assert_int_equal(a.allowed, 1);
		assert_null(strstr(a.body, "overlaps"));
		admission_answer_free(&a);
		pools.ns = NULL;
	}

	/* Nothing else overlaps: no warnings member at all; no pools given: no look. */
	pools.n = 1;
	pools.objs = &objs[4];
	assert_int_equal(admission_review_pools(IP, half_review, strlen(half_review), &pools, &a), 0);
	assert_int_equal(a.allowed, 1);
	assert_null(strstr(a.body, "warnings"));
	admission_answer_free(&a);
	assert_int_equal(admission_review(IP, half_review, strlen(half_review), &a), 0);
	assert_int_equal(a.allowed, 1);
	assert_null(strstr(a.body, "warnings"));
	admission_answer_free(&a);
	for (size_t i = 0; i < 5; i++)
		json_object_put(objs[i]);
}

/* Twenty pools of one subnet: five named, the rest counted; an invalid spec is denied as before. */
static void test_overlap_capped(void **state)
{
	const char *bad = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
			  "{\"uid\":\"u8\",\"operation\":\"CREATE\",\"object\":{\"kind\":\"IPPool\","
			  "\"metadata\":{\"name\":\"half\"},\"spec\":{\"subnet\":\"192.168.96.0/25\"}}}}";
	struct json_object *objs[20];
	struct admission_pools pools = { .objs = objs, .n = 20 };
	struct admission_answer a = { 0 };
	char buf[4096], name[16];

	(void)state;
	for (size_t i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "p%02zu", i);
		objs[i] = pool_obj("IPPool", name, "192.168.96.0/24");
	}
	assert_int_equal(admission_review_pools(IP, half_review, strlen(half_review), &pools, &a), 0);
	assert_int_equal(a.allowed, 1);
	assert_int_equal(a.warnings, OVERLAP_HOOK_NAMED + 1);
	warnings_text(&a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "overlaps IPPool \"p04\" 192.168.96.0/24|IPPool \"half\" overlaps 15 more pools"));
	assert_null(strstr(buf, "p05"));
	admission_answer_free(&a);
	pools.reject = true;
	assert_int_equal(admission_review_pools(IP, bad, strlen(bad), &pools, &a), 0);
	assert_int_equal(a.allowed, 0);
	assert_non_null(strstr(a.message, "spec.perNodeBlockSize"));
	assert_null(strstr(a.message, "overlaps"));
	admission_answer_free(&a);
	for (size_t i = 0; i < 20; i++)
		json_object_put(objs[i]);
}

struct told {
	char lines[8][1024];
	size_t n;
	int rc;
};

static int tell(void *ctx, struct json_object *pool, const char *message)
{
	struct told *t = ctx;

	assert_true(t->n < 8);
	snprintf(t->lines[t->n++], sizeof(t->lines[0]), "%s: %s", k8s_object_name(pool), message);
	return t->rc;
}

/* An Event on both pools once per pair; again when a prefix changes; a failed one again. */
static void test_overlap_events(void **state)
{
	struct json_object *objs[] = {
		pool_obj("IPPool", "wide", "192.168.96.0/24"),
		pool_obj("IPPool", "half", "192.168.96.0/25"),
		pool_obj("IPPool", "away", "10.0.0.0/8"),
	};
	struct overlap_seen seen = { 0 };
	struct told t = { 0 };

	(void)state;
	assert_int_equal(overlap_events_pass(&seen, objs, 3, tell, &t), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.lines[0], "wide: IPPool \"wide\" 192.168.96.0/24 overlaps IPPool \"half\" "
			    "192.168.96.0/25: a node given blocks of both may hand out one address twice");
	assert_string_equal(t.lines[1], "half: IPPool \"half\" 192.168.96.0/25 overlaps IPPool \"wide\" "
			    "192.168.96.0/24: a node given blocks of both may hand out one address twice");
	t.n = 0;
	assert_int_equal(overlap_events_pass(&seen, objs, 3, tell, &t), 0);
	assert_int_equal(t.n, 0);
	/* "half" moves inside "wide" still: a new pair; a failed Event is tried at the next pass. */
	json_object_put(objs[1]);
	objs[1] = pool_obj("IPPool", "half", "192.168.96.128/25");
	t.rc = -EIO;
	assert_int_equal(overlap_events_pass(&seen, objs, 3, tell, &t), 1);
	assert_int_equal(t.n, 1);
	t.n = 0;
	t.rc = 1; /* held back by the burst limit: counts as told */
	assert_int_equal(overlap_events_pass(&seen, objs, 3, tell, &t), 0);
	assert_int_equal(t.n, 2);
	t.n = 0;
	assert_int_equal(overlap_events_pass(&seen, objs, 3, tell, &t), 0);
	assert_int_equal(t.n, 0);
	/* The overlap ends, then comes back: told again. */
	assert_int_equal(overlap_events_pass(&seen, &objs[1], 2, tell, &t), 0);
	assert_int_equal(seen.n, 0);
	assert_int_equal(overlap_events_pass(&seen, objs, 3, tell, &t), 0);
	assert_int_equal(t.n, 2);
	overlap_seen_free(&seen);
	for (size_t i = 0; i < 3; i++)
		json_object_put(objs[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_delete_and_versions),
		cmocka_unit_test(test_not_a_review),
		cmocka_unit_test(test_hostile_strings),
		cmocka_unit_test(test_many_static_allocations),
		cmocka_unit_test(test_review_comparisons_grow_n_log_n),
		cmocka_unit_test(test_long_values_cut),
		cmocka_unit_test(test_overlap_warned),
		cmocka_unit_test(test_overlap_capped),
		cmocka_unit_test(test_overlap_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
