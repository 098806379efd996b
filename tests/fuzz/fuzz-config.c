/* libFuzzer target: network config from stdin (cni_conf_parse, its getters, the key warnings) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/error-json.h"
#include "common/cni/result.h"
#include "common/cni/version.h"
#include "common/util/error.h"
#include "common/util/guid.h"
#include "common/util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keys a plugin of this suite or a runtime actually reads. */
static const char *const str_paths[] = {
	"master", "mode", "mac", "type", "runtimeConfig.mac", "runtimeConfig.infinibandGUID",
	"runtimeConfig.deviceID", "ipam.type", "ipam.poolName", "deviceID", "pciBusID",
	"args.cni.mac", "a.b.c.d.e.f.g.h", "kernelpath", "hwaddr", "device", "args.cni.guid", "guid",
};
static const char *const bool_paths[] = {
	"linkInContainer", "capabilities.mac", "capabilities.ips", "runtimeConfig.mac", "umcast",
};
static const char *const int_paths[] = { "mtu", "bcqueuelen", "ipam.perNodeBlockSize", "master", "pkey" };
static const char *const strv_paths[] = {
	"args.cni.ips", "runtimeConfig.ips", "ipam.exclude", "dns.nameservers", "master",
};

static FILE *sink(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		abort();
	return f;
}

/* A negative return must leave an error to print: the protocol has no "unknown error". */
static void expect_err(int r, const struct cni_err *err, const char *what, const char *path)
{
	if (r < 0 && err->code == CNI_OK) {
		fprintf(stderr, "%s(\"%s\") returned %d without recording an error\n", what, path, r);
		abort();
	}
	if (r < 0)
		cni_err_print(err, NULL, sink());
}

/* host-device's GUID keys: what parses is 23 bytes and formats back to itself, case aside. */
static void check_guid(const char *s)
{
	char text[GUID_TEXT_SIZE];
	uint64_t g, again;

	if (guid_parse(s, &g) < 0)
		return;
	if (strlen(s) != GUID_TEXT_SIZE - 1 || strcasecmp(guid_format(g, text), s) != 0 ||
	    guid_parse(text, &again) < 0 || again != g)
		abort();
}

static void get_all(const struct cni_conf *conf, const char *path)
{
	struct cni_err err = { 0 };
	const char *s = NULL;
	char **v = NULL;
	size_t n = 0;
	int64_t i = 0;
	uint64_t u = 0;
	bool b = false;
	int r;

	r = cni_conf_get_str(conf, path, &s, &err);
	expect_err(r, &err, "cni_conf_get_str", path);
	if (r > 0 && !s)
		abort();
	if (r > 0)
		check_guid(s);
	err = (struct cni_err){ 0 };
	r = cni_conf_get_bool(conf, path, &b, &err);
	expect_err(r, &err, "cni_conf_get_bool", path);
	err = (struct cni_err){ 0 };
	r = cni_conf_get_int(conf, path, 0, INT32_MAX, &i, &err);
	expect_err(r, &err, "cni_conf_get_int", path);
	if (r > 0 && (i < 0 || i > INT32_MAX))
		abort();
	err = (struct cni_err){ 0 };
	r = cni_conf_get_int(conf, path, INT64_MIN, INT64_MAX, &i, &err);
	expect_err(r, &err, "cni_conf_get_int", path);
	err = (struct cni_err){ 0 };
	r = cni_conf_get_uint_text(conf, path, 0xffff, &u, &err);
	expect_err(r, &err, "cni_conf_get_uint_text", path);
	if (r > 0 && u > 0xffff)
		abort();
	err = (struct cni_err){ 0 };
	r = cni_conf_get_str_array(conf, path, &v, &n, &err);
	expect_err(r, &err, "cni_conf_get_str_array", path);
	if (r > 0) {
		for (size_t k = 0; k < n; k++)
			if (!v[k])
				abort();
		cni_conf_strv_free(v, n);
	}
}

/* Every key the input itself has, one level down too: exercises the any-case matching. */
static void get_input_keys(const struct cni_conf *conf)
{
	struct json_object_iterator it = json_object_iter_begin(conf->root);
	struct json_object_iterator end = json_object_iter_end(conf->root);

	for (size_t count = 0; !json_object_iter_equal(&it, &end) && count < 32;
	     json_object_iter_next(&it), count++) {
		const char *k = json_object_iter_peek_name(&it);
		struct json_object *val = json_object_iter_peek_value(&it);
		struct json_object_iterator sub, sub_end;

		get_all(conf, k);
		if (!json_object_is_type(val, json_type_object))
			continue;
		sub = json_object_iter_begin(val);
		sub_end = json_object_iter_end(val);
		for (size_t n = 0; !json_object_iter_equal(&sub, &sub_end) && n < 16;
		     json_object_iter_next(&sub), n++) {
			char path[256];

			snprintf(path, sizeof(path), "%s.%s", k, json_object_iter_peek_name(&sub));
			get_all(conf, path);
		}
	}
}

/* The misspelt-key warnings: a key known in any case is never one; the walk of any input. */
static void check_keys(const struct cni_conf *conf)
{
	static const char *const top[] = { "master", "mode", "mtu", "mac", "sysctl", "table", NULL };
	static const char *const ipam[] = { "type", "poolName", "poolType", "addresses", NULL };
	static const char *const args[] = { "ips", "poolNames", "guid", NULL };
	static const struct cni_conf_keys tables[] = {
		{ NULL, top }, { "ipam", ipam }, { "args.cni", args }, { "a.b.c.d.e.f.g.h", args }, { 0 },
	};
	struct json_object_iterator it = json_object_iter_begin(conf->root);
	struct json_object_iterator end = json_object_iter_end(conf->root);

	for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *k = json_object_iter_peek_name(&it);

		for (size_t i = 0; top[i]; i++)
			if (strcasecmp(k, top[i]) == 0 && cni_conf_key_near(k, top, true))
				abort();
	}
	(void)cni_conf_keys_warn(conf->root, tables, "config");
}

static void render_prev(const struct cni_result *res)
{
	for (size_t i = 0; i < cni_versions_count; i++) {
		struct cni_err err = { 0 };
		char *out = NULL;
		int r = cni_result_to_json(res, cni_versions[i], &out, &err);

		expect_err(r, &err, "cni_result_to_json", cni_versions[i]);
		/* Only the 0.1.0/0.2.0 shape can refuse a result (no IP to put in ip4/ip6). */
		if (r < 0 && cni_version_cmp(cni_versions[i], "0.3.0") >= 0) {
			fprintf(stderr, "cannot render prevResult as %s: %s\n", cni_versions[i], err.msg);
			abort();
		}
		free(out);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_conf conf = { 0 };
	struct cni_attachment *att = NULL;
	struct cni_err err = { 0 };
	static bool logging;
	size_t n_att = 0;
	int r;

	/* Warnings to /dev/null: the fuzzer's output stays its own. */
	if (!logging) {
		log_setup("fuzz", LOG_LEVEL_INFO, LOG_LEVEL_ERROR, open("/dev/null", O_WRONLY | O_CLOEXEC));
		logging = true;
	}
	r = cni_conf_parse((const char *)data, size, &conf, &err);
	expect_err(r, &err, "cni_conf_parse", "");
	if (r < 0) {
		if (!memchr(conf.cni_version, '\0', sizeof(conf.cni_version)))
			abort();
		cni_err_print(&err, conf.cni_version, sink());
		return 0;
	}
	if (!conf.root || !conf.name || !cni_version_supported(conf.cni_version))
		abort();

	for (size_t i = 0; i < sizeof(str_paths) / sizeof(str_paths[0]); i++)
		get_all(&conf, str_paths[i]);
	for (size_t i = 0; i < sizeof(bool_paths) / sizeof(bool_paths[0]); i++)
		get_all(&conf, bool_paths[i]);
	for (size_t i = 0; i < sizeof(int_paths) / sizeof(int_paths[0]); i++)
		get_all(&conf, int_paths[i]);
	for (size_t i = 0; i < sizeof(strv_paths) / sizeof(strv_paths[0]); i++)
		get_all(&conf, strv_paths[i]);
	get_input_keys(&conf);
	check_keys(&conf);

	err = (struct cni_err){ 0 };
	r = cni_conf_gc_attachments(&conf, &att, &n_att, &err);
	expect_err(r, &err, "cni_conf_gc_attachments", "");
	if (r > 0) {
		for (size_t i = 0; i < n_att; i++)
			if (!att[i].container_id || !att[i].ifname)
				abort();
		cni_attachments_free(att, n_att);
	}

	if (conf.prev_result)
		render_prev(conf.prev_result);

	cni_conf_free(&conf);
	return 0;
}
