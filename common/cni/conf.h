/* Network configuration from stdin: common fields and typed access for plugins */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cni/result.h"
#include "common/util/json-go.h"
#include "common/util/json.h"

struct cni_err;
struct json_object;

struct cni_attachment {
	char *container_id;
	char *ifname;
};

struct cni_conf {
	char cni_version[16];       /* "0.1.0" when absent */
	const char *name;           /* owned by root */
	const char *type;
	const char *ipam_type;      /* NULL or "" means no IPAM (L2) */
	bool has_dns;
	struct cni_dns dns;
	struct cni_result *prev_result; /* NULL when absent */
	const char *log_file;       /* top-level "logFile", NULL when absent */
	const char *log_level;      /* top-level "logLevel" */
	const char *raw;            /* the stdin bytes, passed unchanged to IPAM */
	size_t raw_len;
	struct json_object *root;
};

/**
 * cni_conf_parse() - parse and validate the common part of a network config
 * @buf: stdin bytes (kept by reference for IPAM delegation)
 * @len: number of bytes
 * @ret: config, written only on success
 * @err: code 6 (decode), 1 (version) or 7 (invalid config)
 *
 * Return: 0 on success, negative errno on failure. On failure, @ret->cni_version
 * may still be set so the error can carry it.
 */
int cni_conf_parse(const char *buf, size_t len, struct cni_conf *ret, struct cni_err *err);

/**
 * cni_conf_free() - release a parsed config and zero it
 * @conf: config
 */
void cni_conf_free(struct cni_conf *conf);

/**
 * cni_conf_get_str() - string at a dotted path ("master", "runtimeConfig.mac")
 * @conf: config
 * @path: keys separated by '.', each matched as Go does (exact, then any case)
 * @ret: string owned by @conf, written only when present
 * @err: code 6 naming the path on a wrong type
 *
 * Return: 1 when present, 0 when absent, negative errno on a wrong type.
 */
static inline int cni_conf_get_str(const struct cni_conf *conf, const char *path,
				   const char **ret, struct cni_err *err)
{
	return cjson_path_get_str(conf->root, path, ret, err);
}

/**
 * cni_conf_get_bool() - boolean at a dotted path
 * @conf: config
 * @path: dotted path
 * @ret: value, written only when present
 * @err: code 6 naming the path on a wrong type
 *
 * Return: 1 when present, 0 when absent, negative errno on a wrong type.
 */
static inline int cni_conf_get_bool(const struct cni_conf *conf, const char *path, bool *ret,
				    struct cni_err *err)
{
	return cjson_path_get_bool(conf->root, path, ret, err);
}

/**
 * cni_conf_get_int() - integer at a dotted path, within bounds
 * @conf: config
 * @path: dotted path
 * @min: lowest accepted value
 * @max: highest accepted value
 * @ret: value, written only when present and valid
 * @err: code 6 (type) or 7 (range) naming the path
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
static inline int cni_conf_get_int(const struct cni_conf *conf, const char *path, int64_t min,
				   int64_t max, int64_t *ret, struct cni_err *err)
{
	return cjson_path_get_int(conf->root, path, min, max, ret, err);
}

/**
 * cni_conf_get_uint_text() - unsigned integer at a dotted path, as a number or a string
 * @conf: config
 * @path: dotted path
 * @max: highest accepted value
 * @ret: value, written only when present and valid
 * @err: code 6 (type) or 7 (text, range) naming the path
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
static inline int cni_conf_get_uint_text(const struct cni_conf *conf, const char *path,
					 uint64_t max, uint64_t *ret, struct cni_err *err)
{
	return cjson_path_get_uint_text(conf->root, path, max, ret, err);
}

/**
 * cni_conf_get_str_array() - array of strings at a dotted path, copied
 * @conf: config
 * @path: dotted path
 * @ret: array to release with cni_conf_strv_free(), written only when present
 * @ret_n: number of entries
 * @err: code 6 naming the path on a wrong type
 *
 * Return: 1 when present, 0 when absent, negative errno on failure.
 */
static inline int cni_conf_get_str_array(const struct cni_conf *conf, const char *path,
					 char ***ret, size_t *ret_n, struct cni_err *err)
{
	return cjson_path_get_str_array(conf->root, path, ret, ret_n, err);
}

/**
 * cni_conf_strv_free() - release an array from cni_conf_get_str_array()
 * @v: array
 * @n: number of entries
 */
static inline void cni_conf_strv_free(char **v, size_t n)
{
	cjson_strv_free(v, n);
}

/**
 * cni_conf_gc_attachments() - the attachments GC must keep
 * @conf: config
 * @ret: array, written only on success (NULL when the key is absent)
 * @ret_n: number of entries
 * @err: code 6 for malformed entries
 *
 * Reads "cni.dev/valid-attachments", and "cni.dev/attachments" that libcni
 * also sends.
 *
 * Return: 1 when a list was given, 0 when none, negative errno on failure.
 */
int cni_conf_gc_attachments(const struct cni_conf *conf, struct cni_attachment **ret,
			    size_t *ret_n, struct cni_err *err);

/**
 * cni_attachments_free() - release an array from cni_conf_gc_attachments()
 * @a: array
 * @n: number of entries
 */
void cni_attachments_free(struct cni_attachment *a, size_t n);

/**
 * cni_conf_has_ipam() - whether the config names an IPAM plugin ("ipam": {} or none is L2)
 * @conf: config
 *
 * Return: true when ipam.type is set.
 */
bool cni_conf_has_ipam(const struct cni_conf *conf);

/**
 * cni_conf_ipam_type_valid() - whether ipam.type is a plain plugin name (no '/', not "." or "..")
 * @type: the name
 *
 * Return: true when it can only name a file inside the CNI_PATH directories.
 */
bool cni_conf_ipam_type_valid(const char *type);

/**
 * cni_conf_check_l2_version() - refuse an interface without IPAM where no result can describe it
 * @conf: the network config
 * @err: code 7 for cniVersion 0.1.0 and 0.2.0, whose results hold only addresses
 *
 * Called by an interface plugin's config loader before anything is created,
 * so that an L2 ADD fails cleanly.
 *
 * Return: 0 when the version can carry an interface, -EINVAL otherwise.
 */
int cni_conf_check_l2_version(const struct cni_conf *conf, struct cni_err *err);
