/*
 * Unit tests: the Kubernetes API client's pure parts: kubeconfig (YAML) and in-cluster
 * connections, token files re-read when they rotate, Status objects, URL escaping, a
 * watch's lines and events, and Lists read as a stream
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/api/conn.h"
#include "ipam/nv-ipam/api/token.h"
#include "ipam/nv-ipam/api/watch.h"
#include "ipam/nv-ipam/api/yaml.h"
#include "ipam/nv-ipam/k8s/liststream.h"

static char tmpdir[] = "/tmp/test-api.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static const char *in_tmp(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* ---- YAML ---- */

static struct json_object *yaml_ok(const char *text)
{
	struct json_object *o = NULL;
	struct cni_err err = { 0 };

	if (api_yaml_parse(text, strlen(text), "test.yaml", &o, &err) < 0)
		fail_msg("api_yaml_parse: %s", err.msg);
	return o;
}

static void yaml_fails(const char *text, const char *part)
{
	struct json_object *o = NULL;
	struct cni_err err = { 0 };

	assert_true(api_yaml_parse(text, strlen(text), "test.yaml", &o, &err) < 0);
	assert_int_equal(err.code, 7);
	if (!strstr(err.msg, part))
		fail_msg("\"%s\" does not contain \"%s\"", err.msg, part);
	assert_null(o);
}

static void test_yaml(void **state)
{
	struct json_object *o;

	(void)state;
	o = yaml_ok("a: 1\nb: [x, \"true\", true, ~, null, 'q']\nc:\n  d: {e: False}\nf:\n");
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"a\":\"1\",\"b\":[\"x\",\"true\",true,null,null,\"q\"],\"c\":{\"d\":{\"e\":false}},"
			    "\"f\":null}");
	json_object_put(o);
	/* JSON is YAML. */
	o = yaml_ok("{\"kind\": \"Config\", \"n\": [1, 2]}");
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
			    "{\"kind\":\"Config\",\"n\":[\"1\",\"2\"]}");
	json_object_put(o);
	/* An empty file is no document. */
	assert_null(yaml_ok(""));
	yaml_fails("a: &x 1\nb: *x\n", "aliases are not supported");
	yaml_fails("a: 1\na: 2\n", "a key given twice");
	yaml_fails("a: 1\n---\nb: 2\n", "more than one YAML document");
	yaml_fails("a: [1\n", "line");
	yaml_fails("? [1]\n: 2\n", "not a string");
}

/* ---- kubeconfig ---- */

#define KUBECONFIG_HEAD                                                                            \
	"apiVersion: v1\n"                                                                         \
	"kind: Config\n"                                                                           \
	"clusters:\n"                                                                              \
	"- name: other\n"                                                                          \
	"  cluster: {server: \"https://other:1\"}\n"                                               \
	"- name: kit\n"                                                                            \
	"  cluster:\n"                                                                             \
	"    server: https://127.0.0.1:6443/\n"                                                    \
	"    certificate-authority: ca.crt\n"

static void kubeconfig_ok(const char *text, struct api_conn *ret)
{
	struct cni_err err = { 0 };

	write_file("kubeconfig", text);
	if (api_conn_kubeconfig(in_tmp("kubeconfig"), ret, &err) < 0)
		fail_msg("api_conn_kubeconfig: %s", err.msg);
}

static void kubeconfig_fails(const char *text, const char *part)
{
	struct api_conn c = { 0 };
	struct cni_err err = { 0 };

	write_file("kubeconfig", text);
	assert_true(api_conn_kubeconfig(in_tmp("kubeconfig"), &c, &err) < 0);
	if (!strstr(err.msg, part))
		fail_msg("\"%s\" does not contain \"%s\"", err.msg, part);
	assert_null(c.server);
}

static void test_kubeconfig(void **state)
{
	struct api_conn c = { 0 };
	struct cni_err err = { 0 };
	char *tok = NULL;
	char want[300];

	(void)state;
	/* A token file relative to the kubeconfig's directory; a trailing '/' dropped. */
	write_file("sa-token", "  tok-1\n");
	kubeconfig_ok(KUBECONFIG_HEAD
		      "users:\n- name: u\n  user: {tokenFile: sa-token}\n"
		      "contexts:\n- name: c\n  context: {cluster: kit, user: u}\n"
		      "current-context: c\n", &c);
	assert_string_equal(c.server, "https://127.0.0.1:6443");
	snprintf(want, sizeof(want), "%s/ca.crt", tmpdir);
	assert_string_equal(c.ca_file, want);
	assert_false(c.insecure);
	assert_non_null(c.token);
	assert_int_equal(api_token_get(c.token, false, &tok, &err), 0);
	assert_string_equal(tok, "tok-1");
	free(tok);
	api_conn_free(&c);

	/* A static token; data fields decoded; insecure. */
	kubeconfig_ok("clusters:\n- name: k\n  cluster:\n    server: https://[fd00::1]:443\n"
		      "    certificate-authority-data: UEVNLUNB\n    insecure-skip-tls-verify: true\n"
		      "users:\n- name: u\n  user:\n    token: abc.def\n"
		      "    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ\n"
		      "contexts:\n- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\n", &c);
	assert_string_equal(c.server, "https://[fd00::1]:443");
	assert_int_equal(c.ca_pem_len, 6);
	assert_memory_equal(c.ca_pem, "PEM-CA", 6);
	assert_int_equal(c.cert_pem_len, 4);
	assert_memory_equal(c.cert_pem, "CERT", 4);
	assert_memory_equal(c.key_pem, "KEY", 3);
	assert_true(c.insecure);
	assert_null(api_token_path(c.token));
	assert_int_equal(api_token_get(c.token, true, &tok, &err), 0);
	assert_string_equal(tok, "abc.def");
	free(tok);
	api_conn_free(&c);

	kubeconfig_fails(KUBECONFIG_HEAD "current-context: nope\n", "context \"nope\" not found");
	kubeconfig_fails(KUBECONFIG_HEAD "contexts:\n- name: c\n  context: {cluster: kit}\n",
			 "no current-context");
	kubeconfig_fails(KUBECONFIG_HEAD "contexts:\n- name: c\n  context: {cluster: gone}\n"
			 "current-context: c\n", "cluster \"gone\" not found");
	kubeconfig_fails(KUBECONFIG_HEAD "users:\n- name: u\n  user:\n    exec: {command: x}\n"
			 "contexts:\n- name: c\n  context: {cluster: kit, user: u}\ncurrent-context: c\n",
			 "the user's \"exec\" is not supported");
	kubeconfig_fails("clusters:\n- name: k\n  cluster: {server: \"http://x:1\"}\n"
			 "contexts:\n- name: c\n  context: {cluster: k}\ncurrent-context: c\n",
			 "is not an https:// URL");
	kubeconfig_fails("clusters:\n- name: k\n  cluster: {server: \"https://x:1?a\"}\n"
			 "contexts:\n- name: c\n  context: {cluster: k}\ncurrent-context: c\n",
			 "is not an https:// URL");
	kubeconfig_fails("clusters:\n- name: k\n  cluster: {server: \"https://x\", "
			 "certificate-authority-data: \"not base64!\"}\n"
			 "contexts:\n- name: c\n  context: {cluster: k}\ncurrent-context: c\n",
			 "certificate-authority-data is not base64");
	kubeconfig_fails("clusters:\n- name: k\n  cluster: {server: \"https://x\"}\nusers:\n- name: u\n"
			 "  user: {client-certificate-data: Q0VSVA==}\n"
			 "contexts:\n- name: c\n  context: {cluster: k, user: u}\ncurrent-context: c\n",
			 "without its key");
	kubeconfig_fails("- a\n- b\n", "not a kubeconfig");
	kubeconfig_fails("current-context: 5\n", "context \"5\" not found");
}

static void test_in_cluster(void **state)
{
	struct api_conn c = { 0 };
	struct cni_err err = { 0 };
	char want[300];

	(void)state;
	unsetenv("KUBERNETES_SERVICE_HOST");
	assert_int_equal(api_conn_in_cluster(tmpdir, &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"));
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	err = (struct cni_err){ 0 };
	/* No ca.crt in the directory yet. */
	assert_int_equal(api_conn_in_cluster(tmpdir, &c, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "ca.crt"));
	write_file("ca.crt", "PEM");
	assert_int_equal(api_conn_in_cluster(tmpdir, &c, &err), 0);
	assert_string_equal(c.server, "https://[fd00::1]:443");
	snprintf(want, sizeof(want), "%s/token", tmpdir);
	assert_string_equal(api_token_path(c.token), want);
	api_conn_free(&c);
	setenv("KUBERNETES_SERVICE_PORT", "443/x", 1);
	err = (struct cni_err){ 0 };
	assert_int_equal(api_conn_in_cluster(tmpdir, &c, &err), -EINVAL);
	setenv("KUBERNETES_SERVICE_HOST", "a b", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	assert_int_equal(api_conn_in_cluster(tmpdir, &c, &err), -EINVAL);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

/* ---- tokens ---- */

static void test_token_rotation(void **state)
{
	struct api_token *t = NULL;
	struct cni_err err = { 0 };
	char *tok = NULL;
	char tmp[300];

	(void)state;
	assert_int_equal(api_token_new_file(in_tmp("token"), &t), 0);
	/* Missing: an error naming the file, at the first use. */
	assert_int_equal(api_token_get(t, false, &tok, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "token"));
	write_file("token", "first\n");
	assert_int_equal(api_token_get(t, false, &tok, &err), 0);
	assert_string_equal(tok, "first");
	free(tok);
	/* Kubelet's way: a new file renamed over the link's target (another inode). */
	snprintf(tmp, sizeof(tmp), "%s/token.new", tmpdir);
	write_file("token.new", "second");
	assert_int_equal(rename(tmp, in_tmp("token")), 0);
	assert_int_equal(api_token_get(t, false, &tok, &err), 0);
	assert_string_equal(tok, "second");
	free(tok);
	/* Rewritten in place with another length: seen by its size. */
	write_file("token", "third-token");
	assert_int_equal(api_token_get(t, false, &tok, &err), 0);
	assert_string_equal(tok, "third-token");
	free(tok);
	/* What cannot go into a header is refused, and the old token is not used instead. */
	write_file("token", "bad token\n");
	err = (struct cni_err){ 0 };
	assert_int_equal(api_token_get(t, true, &tok, &err), -EINVAL);
	assert_int_equal(err.code, 7);
	write_file("token", "\n \n");
	err = (struct cni_err){ 0 };
	assert_int_equal(api_token_get(t, true, &tok, &err), -EINVAL);
	api_token_free(t);
	assert_int_equal(api_token_new_static("a\r\nb", &t), -EINVAL);
}

/* ---- Status, escaping ---- */

static void test_status(void **state)
{
	struct api_status st;
	const char *body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods is forbidden: "
			   "User \\\"x\\n\\\" cannot list\",\"reason\":\"Forbidden\",\"code\":403}";

	(void)state;
	api_status_from(403, body, strlen(body), &st);
	assert_int_equal(st.http, 403);
	assert_string_equal(st.reason, "Forbidden");
	/* A message from the API reaches a log escaped. */
	assert_string_equal(st.message, "pods is forbidden: User \"x\\n\" cannot list");
	api_status_from(410, "not json", 8, &st);
	assert_string_equal(st.reason, "Gone");
	assert_string_equal(st.message, "");
	api_status_from(502, NULL, 0, &st);
	assert_string_equal(st.reason, "Unknown");
	assert_int_equal(api_status_errno(401), -EPERM);
	assert_int_equal(api_status_errno(403), -EPERM);
	assert_int_equal(api_status_errno(404), -ENOENT);
	assert_int_equal(api_status_errno(409), -EEXIST);
	assert_int_equal(api_status_errno(410), -ESTALE);
	assert_int_equal(api_status_errno(429), -EAGAIN);
	assert_int_equal(api_status_errno(503), -EAGAIN);
	assert_int_equal(api_status_errno(400), -EPROTO);
}

static void test_escape(void **state)
{
	_cleanup_free_ char *a = api_escape("spec.nodeName=node-1.x_y~z");
	_cleanup_free_ char *b = api_escape("a b/c&d?é");

	(void)state;
	assert_string_equal(a, "spec.nodeName%3Dnode-1.x_y~z");
	assert_string_equal(b, "a%20b%2Fc%26d%3F%C3%A9");
}

/* ---- a watch's lines and events ---- */

struct seen {
	char lines[8][64];
	size_t n;
	int fail_at;
};

static int on_line(void *ctx, const char *line, size_t len)
{
	struct seen *s = ctx;

	if (s->fail_at >= 0 && (size_t)s->fail_at == s->n)
		return -EIO;
	snprintf(s->lines[s->n++], sizeof(s->lines[0]), "%.*s", (int)len, line);
	return 0;
}

static void test_lines(void **state)
{
	struct api_lines l = { .max = 16 };
	struct seen s = { .fail_at = -1 };
	const char *text = "one\n\ntwo\nthree-is-long\nfour";

	(void)state;
	/* A byte at a time gives the same lines as all at once; empty lines are skipped. */
	for (size_t i = 0; i < strlen(text); i++)
		assert_int_equal(api_lines_feed(&l, text + i, 1, on_line, &s), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.lines[0], "one");
	assert_string_equal(s.lines[1], "two");
	assert_string_equal(s.lines[2], "three-is-long");
	/* "four" waits for its end: a stream that stops there cut an event. */
	assert_true(api_lines_pending(&l));
	assert_int_equal(api_lines_feed(&l, "\n", 1, on_line, &s), 0);
	assert_string_equal(s.lines[3], "four");
	assert_false(api_lines_pending(&l));
	/* Longer than the bound: refused, whole or in pieces. */
	assert_int_equal(api_lines_feed(&l, "0123456789abcdefg\n", 18, on_line, &s), -E2BIG);
	api_lines_free(&l);
	l = (struct api_lines){ .max = 16 };
	assert_int_equal(api_lines_feed(&l, "0123456789", 10, on_line, &s), 0);
	assert_int_equal(api_lines_feed(&l, "abcdefg", 7, on_line, &s), -E2BIG);
	api_lines_free(&l);
	/* The callback's error stops the feeding. */
	l = (struct api_lines){ .max = 16 };
	s = (struct seen){ .fail_at = 1 };
	assert_int_equal(api_lines_feed(&l, "a\nb\nc\n", 6, on_line, &s), -EIO);
	assert_int_equal(s.n, 1);
	api_lines_free(&l);
}

static void event_fails(const char *line, const char *part)
{
	struct api_event e = { 0 };
	struct cni_err err = { 0 };

	assert_true(api_event_parse(line, strlen(line), &e, &err) < 0);
	assert_int_equal(err.code, 6);
	if (!strstr(err.msg, part))
		fail_msg("\"%s\" does not contain \"%s\"", err.msg, part);
	assert_null(e.object);
}

static void test_events(void **state)
{
	struct api_event e = { 0 };
	struct cni_err err = { 0 };
	const char *added = "{\"type\":\"ADDED\",\"object\":{\"kind\":\"IPPool\",\"metadata\":"
			    "{\"name\":\"p1\",\"namespace\":\"ns\",\"resourceVersion\":\"42\"}}}";
	const char *bookmark = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"IPPool\",\"metadata\":"
			       "{\"resourceVersion\":\"99\"}}}\r";
	const char *gone = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
			   "\"message\":\"too old resource version: 1 (50)\",\"reason\":\"Expired\",\"code\":410}}";
	char key[64];

	(void)state;
	assert_int_equal(api_event_parse(added, strlen(added), &e, &err), 0);
	assert_int_equal(e.type, API_EVENT_ADDED);
	assert_string_equal(e.namespace, "ns");
	assert_string_equal(e.name, "p1");
	assert_string_equal(e.resource_version, "42");
	assert_int_equal(api_object_key(e.object, key, sizeof(key)), 0);
	assert_string_equal(key, "ns/p1");
	api_event_clear(&e);
	assert_int_equal(api_event_parse(bookmark, strlen(bookmark), &e, &err), 0);
	assert_int_equal(e.type, API_EVENT_BOOKMARK);
	assert_string_equal(e.resource_version, "99");
	api_event_clear(&e);
	assert_int_equal(api_event_parse(gone, strlen(gone), &e, &err), 0);
	assert_int_equal(e.type, API_EVENT_ERROR);
	assert_int_equal(e.code, 410);
	api_event_clear(&e);

	event_fails("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\"}}}",
		    "without metadata.resourceVersion");
	event_fails("{\"type\":\"DELETED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}",
		    "without metadata.name");
	event_fails("{\"type\":\"SYNC\",\"object\":{}}", "unknown type");
	event_fails("{\"object\":{}}", "no type");
	event_fails("{\"type\":\"ADDED\",\"object\":[]}", "no object");
	event_fails("{\"type\":\"ERROR\",\"object\":{\"code\":\"410\"}}", "without a Status code");
	event_fails("{\"type\":\"ERROR\",\"object\":{\"code\":41000}}", "not an HTTP status");
	event_fails("{\"type\":\"ADDED\"", "malformed JSON");
	event_fails("{\"type\":\"ADDED\",\"object\":{}} {}", "malformed JSON");
	event_fails("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\\xff\"}}}", "malformed");
	/* A NUL cuts a C string: "p\u0000x" would be taken for "p" (issue 45). */
	event_fails("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\\u0000x\","
		    "\"resourceVersion\":\"1\"}}}", "metadata.name (or one holding a NUL)");
	event_fails("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\",\"namespace\":"
		    "\"n\\u0000s\",\"resourceVersion\":\"1\"}}}", "metadata.namespace holds a NUL");
	event_fails("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"p\",\"resourceVersion\":"
		    "\"1\\u00002\"}}}", "metadata.resourceVersion (or one holding a NUL)");
}

/* ---- Lists as a stream ---- */

struct items {
	char names[16][32];
	size_t n;
};

static int on_item(void *ctx, struct json_object *item, size_t index, struct cni_err *err)
{
	struct items *it = ctx;
	struct json_object *m = json_object_object_get(item, "metadata");

	(void)err;
	assert_int_equal(index, it->n);
	snprintf(it->names[it->n++], sizeof(it->names[0]), "%s",
		 json_object_get_string(json_object_object_get(m, "name")));
	return 0;
}

static int read_list(const char *text, size_t piece, struct items *it, struct liststream **ret,
		     struct cni_err *err)
{
	struct liststream *ls = NULL;
	size_t len = strlen(text);
	int r = 0;

	assert_int_equal(liststream_new("list", on_item, it, &ls), 0);
	for (size_t i = 0; r >= 0 && i < len; i += piece)
		r = liststream_feed(ls, text + i, len - i < piece ? len - i : piece, err);
	if (r >= 0)
		r = liststream_end(ls, err);
	*ret = ls;
	return r;
}

static void list_fails(const char *text, const char *part)
{
	for (size_t piece = 1; piece <= strlen(text); piece += strlen(text)) {
		struct items it = { 0 };
		struct liststream *ls = NULL;
		struct cni_err err = { 0 };

		assert_true(read_list(text, piece, &it, &ls, &err) < 0);
		if (!strstr(err.msg, part))
			fail_msg("\"%s\" (pieces of %zu) does not contain \"%s\"", err.msg, piece, part);
		liststream_free(ls);
	}
}

static void test_liststream(void **state)
{
	const char *list = "{\"apiVersion\": \"v1\", \"items\": [{\"metadata\": {\"name\": \"a\", \"x\": "
			   "[1, {\"s\": \"]}\\\"\"}]}}, {\"metadata\": {\"name\": \"b\"}}], \"kind\": "
			   "\"PodList\", \"metadata\": {\"resourceVersion\": \"77\", \"continue\": \"c2\"}, "
			   "\"extra\": -1.5e3, \"z\": null}\n";

	(void)state;
	/* In one piece, or a byte at a time: the same items and members. */
	for (size_t piece = 1; piece <= strlen(list); piece += strlen(list) - 1) {
		struct items it = { 0 };
		struct liststream *ls = NULL;
		struct cni_err err = { 0 };

		if (read_list(list, piece, &it, &ls, &err) < 0)
			fail_msg("pieces of %zu: %s", piece, err.msg);
		assert_int_equal(it.n, 2);
		assert_string_equal(it.names[0], "a");
		assert_string_equal(it.names[1], "b");
		assert_int_equal(liststream_count(ls), 2);
		assert_true(liststream_is_list(ls));
		assert_true(liststream_has_items(ls));
		assert_string_equal(liststream_string(ls, "kind"), "PodList");
		assert_string_equal(liststream_string(ls, "metadata.resourceVersion"), "77");
		assert_string_equal(liststream_string(ls, "metadata.continue"), "c2");
		assert_string_equal(liststream_string(ls, "metadata.nope"), "");
		liststream_free(ls);
	}
	{
		struct items it = { 0 };
		struct liststream *ls = NULL;
		struct cni_err err = { 0 };

		assert_int_equal(read_list("[{\"metadata\":{\"name\":\"x\"}}]", 3, &it, &ls, &err), 0);
		assert_false(liststream_is_list(ls));
		assert_int_equal(it.n, 1);
		liststream_free(ls);
		it.n = 0;
		assert_int_equal(read_list("{\"kind\":\"Pod\",\"spec\":{}}", 5, &it, &ls, &err), 0);
		assert_false(liststream_has_items(ls));
		liststream_free(ls);
	}
	list_fails("", "empty input");
	list_fails("{\"items\":[", "unexpected end of input");
	list_fails("{\"items\":[{\"a\":1},]}", "expected an item after ','");
	list_fails("{\"items\":[{\"a\":1}] {", "expected ',' or '}'");
	list_fails("{\"items\":[]} []", "more than one JSON document");
	list_fails("{\"items\":[1]}", "item 0: expected an object, got number");
	list_fails("{\"items\":[{\"a\":1},\"s\"]}", "item 1: expected an object, got string");
	list_fails("{\"items\":{}}", "expected a List, an array or an object, got");
	list_fails("{\"items\":[],\"items\":[]}", "a key appears twice");
	list_fails("{\"kind\":\"a\",\"kind\":\"b\",\"items\":[]}", "a key appears twice");
	list_fails("{\"items\":[{\"a\":tru}]}", "malformed JSON");
	list_fails("{\"items\":[{\"a\":\"\\xc3\\x28\"}]}", "malformed JSON");
	list_fails("{\"kind\" \"List\"}", "expected ':'");
	list_fails("{items: []}", "expected a key");
	list_fails("\"pods\"", "expected a List, an array or an object, got string");
	list_fails("nonsense", "malformed JSON");
	list_fails("42", "expected a List, an array or an object, got number");
	list_fails("{\"extra\": 1x, \"items\": []}", "malformed JSON");
}

/* A skim that keeps only the item's name, as the node's cut drops what it cannot need. */
static int skim_name(void *ctx, const char *text, size_t len, char **ret, size_t *ret_len)
{
	(void)ctx;
	if (!memmem(text, len, "\"deep\"", 6))
		return 0;
	*ret = strdup("{\"metadata\":{\"name\":\"deep\"}}");
	*ret_len = strlen(*ret);
	return 1;
}

/*
 * An item nested past the depth limit: refused whole, unless a skim cuts it before it is
 * parsed (issue 45: another node's status entry that deep made the list unreadable).
 */
static void test_liststream_deep(void **state)
{
	char text[1024];
	int n = snprintf(text, sizeof(text), "{\"items\":[{\"metadata\":{\"name\":\"deep\"},\"x\":");
	struct items it = { 0 };
	struct liststream *ls = NULL;
	struct cni_err err = { 0 };

	(void)state;
	for (int i = 0; i < 100; i++)
		text[n++] = '[';
	for (int i = 0; i < 100; i++)
		text[n++] = ']';
	snprintf(text + n, sizeof(text) - (size_t)n, "},{\"metadata\":{\"name\":\"b\"}}]}");
	list_fails(text, "nested too deeply");
	assert_int_equal(liststream_new("list", on_item, &it, &ls), 0);
	liststream_set_skim(ls, skim_name, NULL);
	assert_int_equal(liststream_feed(ls, text, strlen(text), &err), 0);
	assert_int_equal(liststream_end(ls, &err), 0);
	assert_int_equal(it.n, 2);
	assert_string_equal(it.names[0], "deep");
	assert_string_equal(it.names[1], "b");
	liststream_free(ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml),
		cmocka_unit_test(test_kubeconfig),
		cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_token_rotation),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_liststream),
		cmocka_unit_test(test_liststream_deep),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
