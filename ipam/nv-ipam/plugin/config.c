/* nv-ipam network configuration: stdin ipam section over nv-ipam.conf, requests from args */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/cni/args.h"
#include "common/cni/conf-keys.h"
#include "common/cni/conf.h"
#include "common/cni/plugin.h"
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json-go.h"
#include "common/util/json.h"
#include "common/util/log.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/plugin/config.h"

#define NVIPAM_CONF_FILE_NAME "nv-ipam.conf"
/* nv-ipam.conf holds a handful of keys; anything this large is not one. */
#define NVIPAM_CONF_MAX_BYTES (64u * 1024u)
/* Leaves room in the 4096-byte buffers for "/nv-ipam.conf", ".lock" and temp suffixes. */
#define NVIPAM_PATH_MAX_LEN 3968
#define NVIPAM_LOCK_TIMEOUT_MAX_MS 600000
#define NVIPAM_LOG_LEVEL_DEFAULT "info"

/* What layer_read() reads, from the ipam section and from nv-ipam.conf alike. */
static const char *const layer_keys[] = {
	"type", "poolName", "poolType", "forcePoolName", "confDir", "poolFile", "storeFile",
	"lockTimeoutMs", "releasedIPCooldownSeconds", "logFile", "logLevel", "daemonSocket",
	"daemonCallTimeoutSeconds", NULL,
};
static const char *const args_keys[] = {
	"poolNames", "poolType", "ips", "allocateDefaultGateway", "allocateIPWithIndex", NULL,
};

const struct cni_conf_keys nvipam_config_keys[] = {
	{ "ipam", layer_keys },
	{ "args.cni", args_keys },
	{ 0 },
};

/* nv-ipam.conf: the same keys at its top level. */
static const struct cni_conf_keys file_keys[] = {
	{ NULL, layer_keys },
	{ 0 },
};

/* The keys one level of the precedence may set; NULL (or "") means "not set here". */
struct nvipam_layer {
	const char *origin; /* for messages: "ipam" or the file's path */
	const char *pool_name;
	const char *pool_type;
	const char *conf_dir;
	const char *log_file;
	const char *log_level;
	const char *pool_file;
	const char *store_file;
	bool has_force_pool_name;
	bool force_pool_name;
	bool has_lock_timeout;
	int64_t lock_timeout_ms;
	bool has_cooldown;
	int64_t cooldown_s;
};

/* Go's encoding leaves "" indistinguishable from absent; the reference overlays on it. */
static int layer_str(struct json_object *obj, const char *key, const char **ret, struct cni_err *err)
{
	const char *s = NULL;
	int r = cjson_get_str(obj, key, &s, err);

	if (r < 0)
		return r;
	*ret = s && *s ? s : NULL;
	return 0;
}

static int layer_read(struct json_object *obj, const char *origin, struct nvipam_layer *ret,
		      struct cni_err *err)
{
	struct nvipam_layer l = { .origin = origin };
	const char *daemon_socket = NULL;
	int64_t daemon_timeout = 0;
	int r;

	if ((r = layer_str(obj, "poolName", &l.pool_name, err)) < 0 ||
	    (r = layer_str(obj, "poolType", &l.pool_type, err)) < 0 ||
	    (r = layer_str(obj, "confDir", &l.conf_dir, err)) < 0 ||
	    (r = layer_str(obj, "logFile", &l.log_file, err)) < 0 ||
	    (r = layer_str(obj, "logLevel", &l.log_level, err)) < 0 ||
	    (r = layer_str(obj, "poolFile", &l.pool_file, err)) < 0 ||
	    (r = layer_str(obj, "storeFile", &l.store_file, err)) < 0 ||
	    /* The reference's daemon keys: meaningless without a daemon, still type-checked. */
	    (r = layer_str(obj, "daemonSocket", &daemon_socket, err)) < 0 ||
	    (r = cjson_get_int(obj, "daemonCallTimeoutSeconds", INT64_MIN, INT64_MAX, &daemon_timeout,
			       err)) < 0)
		return cni_err_prefix(err, r, "%s", origin);
	r = cjson_get_bool(obj, "forcePoolName", &l.force_pool_name, err);
	if (r < 0)
		return cni_err_prefix(err, r, "%s", origin);
	l.has_force_pool_name = r > 0;
	r = cjson_get_int(obj, "lockTimeoutMs", 1, NVIPAM_LOCK_TIMEOUT_MAX_MS, &l.lock_timeout_ms, err);
	if (r < 0)
		return cni_err_prefix(err, r, "%s", origin);
	l.has_lock_timeout = r > 0;
	r = cjson_get_int(obj, "releasedIPCooldownSeconds", 0, NVIPAM_COOLDOWN_MAX_S, &l.cooldown_s, err);
	if (r < 0)
		return cni_err_prefix(err, r, "%s", origin);
	l.has_cooldown = r > 0;
	*ret = l;
	return 0;
}

/* Reads <confDir>/nv-ipam.conf; returns 0 (and no object) when the file does not exist. */
static int conf_file_read(const char *path, struct json_object **ret, struct cni_err *err)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct json_object *root = NULL;
	size_t len = 0;
	int r;

	r = trust_open_file(TRUST_CONF, "confDir", path, O_RDONLY, 0, &fd, err);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = file_read_fd(fd, NVIPAM_CONF_MAX_BYTES, &buf, &len);
	if (r == -EFBIG)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r,
				   "failed to read/parse config file(%s): larger than %u bytes", path,
				   NVIPAM_CONF_MAX_BYTES);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "failed to read config file(%s): %s", path,
				   strerror(-r));
	r = cjson_parse(buf, len, path, &root, err);
	if (r < 0)
		/* An unparsable file is a configuration problem, not a stdin decode failure. */
		return cni_err_code(err, CNI_ERR_INVALID_CONFIG, r);
	if (!json_object_is_type(root, json_type_object)) {
		json_object_put(root);
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "failed to read/parse config file(%s): expected an object", path);
	}
	*ret = root;
	return 1;
}

/*
 * The value of the highest level that sets @key, or @def. A path that reaches
 * the disk must lie where the node lets a network config point (trust.h): the
 * node's nv-ipam.conf is checked the same way, so the node widens the
 * directories in one place. logFile (@area < 0) is checked when it is opened.
 */
static int resolve_path(const char *key, int area, const char *from_stdin, const char *from_file,
			const char *file_origin, const char *def, char *dst, size_t size,
			struct cni_err *err)
{
	const char *v = from_stdin ? from_stdin : from_file ? from_file : def;
	const char *origin = from_stdin ? "ipam" : from_file ? file_origin : "default";
	int r;

	dst[0] = '\0';
	if (!v)
		return 0;
	if (strlen(v) > NVIPAM_PATH_MAX_LEN || strlen(v) >= size)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENAMETOOLONG,
				   "%s: %s is longer than %d bytes", origin, key, NVIPAM_PATH_MAX_LEN);
	if (area >= 0 && (r = trust_path_check((enum trust_area)area, key, v, err)) < 0)
		return cni_err_prefix(err, r, "%s", origin);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int add_pool(struct nvipam_config *c, const char *name, size_t len, struct cni_err *err)
{
	char buf[NVIPAM_POOL_NAME_MAX + 1];
	size_t i = c->n_pools;

	/* Messages as the reference words them; its "more then" is kept verbatim. */
	if (i >= NVIPAM_MAX_POOLS)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "pool field can't contain more then two entries");
	if (len == 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "pool field has invalid format");
	if (len > NVIPAM_POOL_NAME_MAX)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid pool name \"%.64s...\": longer than %d characters", name,
				   NVIPAM_POOL_NAME_MAX);
	memcpy(buf, name, len);
	buf[len] = '\0';
	/* Pool names become store keys and messages: the CNI name rule keeps them plain. */
	if (!nvipam_pool_name_valid(buf))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "invalid pool name \"%s\": must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$", buf);
	/* The same pool twice would be two addresses for one attachment, under one key. */
	for (size_t k = 0; k < i; k++)
		if (strcmp(c->pool_names[k], buf) == 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "pool field names the pool \"%s\" twice", buf);
	memcpy(c->pool_names[i], buf, len + 1);
	c->n_pools++;
	return 0;
}

/* args.cni.poolNames > poolName (stdin > file) > the network name unless forcePoolName. */
static int resolve_pools(const struct cni_ctx *ctx, const struct nvipam_layer *in,
			 const struct nvipam_layer *file, struct nvipam_config *c, struct cni_err *err)
{
	char **names = NULL;
	size_t n = 0;
	const char *pool_name;
	bool force;
	int r;

	r = cni_conf_get_str_array(&ctx->conf, "args.cni.poolNames", &names, &n, err);
	if (r < 0)
		return r;
	if (n > 0) {
		if (n > NVIPAM_MAX_POOLS)
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					"pool field can't contain more then two entries");
		for (size_t i = 0; r >= 0 && i < n; i++)
			r = add_pool(c, names[i], strlen(names[i]), err);
		cni_conf_strv_free(names, n);
		return r < 0 ? r : 0;
	}
	cni_conf_strv_free(names, n);

	force = in->has_force_pool_name ? in->force_pool_name :
		file->has_force_pool_name ? file->force_pool_name : false;
	pool_name = in->pool_name ? in->pool_name : file->pool_name;
	if (!pool_name && !force) {
		pool_name = ctx->conf.name;
		c->pool_from_name = true;
	}
	if (!pool_name || !*pool_name)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "no pool provided");

	n = 1;
	for (const char *p = pool_name; *p; p++)
		n += *p == ',';
	/* Counted first, as the reference does: "a,,b" has too many entries, not an empty one. */
	if (n > NVIPAM_MAX_POOLS)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "pool field can't contain more then two entries");
	for (const char *p = pool_name;; p++) {
		size_t len = strcspn(p, ",");

		r = add_pool(c, p, len, err);
		if (r < 0)
			return r;
		p += len;
		if (!*p)
			break;
	}
	return 0;
}

/* args.cni.poolType > poolType (stdin > file) > ippool, case-insensitive. */
static int resolve_pool_type(const struct cni_ctx *ctx, const struct nvipam_layer *in,
			     const struct nvipam_layer *file, struct nvipam_config *c,
			     struct cni_err *err)
{
	const char *t = NULL;
	char lower[65];
	size_t i;
	int r;

	r = cni_conf_get_str(&ctx->conf, "args.cni.poolType", &t, err);
	if (r < 0)
		return r;
	if (!t || !*t)
		t = in->pool_type ? in->pool_type : file->pool_type ? file->pool_type : "ippool";
	if (strcasecmp(t, "ippool") == 0) {
		c->pool_type = NVIPAM_POOL_IPPOOL;
	} else if (strcasecmp(t, "cidrpool") == 0) {
		c->pool_type = NVIPAM_POOL_CIDRPOOL;
	} else {
		for (i = 0; t[i] && i < sizeof(lower) - 1; i++)
			lower[i] = (t[i] >= 'A' && t[i] <= 'Z') ? (char)(t[i] - 'A' + 'a') : t[i];
		lower[i] = '\0';
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "unsupported poolType %s, supported values: ippool, cidrpool", lower);
	}
	for (i = 0; i < c->n_pools; i++) {
		int n = snprintf(c->pool_keys[i], sizeof(c->pool_keys[i]), "%s%s",
				 c->pool_type == NVIPAM_POOL_CIDRPOOL ? "cidrpool/" : "",
				 c->pool_names[i]);

		if (n < 0 || (size_t)n >= sizeof(c->pool_keys[i]))
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENAMETOOLONG, "pool key too long");
	}
	return 0;
}

/* One requested address: "/len" is dropped, as is the IPv4-mapped form Go prints as IPv4. */
static int static_ip_parse(const char *s, struct ip_addr *ret)
{
	static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	struct ip_prefix p;
	struct ip_addr a;
	int r;

	if (strchr(s, '/')) {
		r = ip_prefix_parse(s, &p);
		a = p.addr;
	} else {
		r = ip_addr_parse(s, &a);
	}
	if (r < 0)
		return r;
	if (a.family == AF_INET6 && memcmp(a.bytes, v4_mapped, sizeof(v4_mapped)) == 0) {
		struct ip_addr v4 = { .family = AF_INET };

		memcpy(v4.bytes, a.bytes + 12, 4);
		a = v4;
	}
	*ret = a;
	return 0;
}

static int add_static_ip(struct nvipam_config *c, const char *s, size_t len, const char *source,
			 struct cni_err *err)
{
	char buf[IP_PREFIX_STRLEN];
	int r = -EINVAL;

	if (c->n_static_ips >= ARRAY_SIZE(c->static_ips))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG,
				   "%s: more than %zu static IPs requested", source,
				   ARRAY_SIZE(c->static_ips));
	if (len < sizeof(buf)) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		r = static_ip_parse(buf, &c->static_ips[c->n_static_ips]);
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s: static IP request contains invalid IP address \"%.*s\"", source,
				   (int)(len > 64 ? 64 : len), s);
	c->n_static_ips++;
	return 0;
}

/* runtimeConfig.ips > args.cni.ips > CNI_ARGS IP; only the first source that has any counts. */
static int resolve_static_ips(const struct cni_ctx *ctx, struct nvipam_config *c,
			      struct cni_err *err)
{
	char **rc_ips = NULL, **args_ips = NULL;
	size_t n_rc = 0, n_args = 0;
	const char *env_ip;
	int r;

	r = cni_conf_get_str_array(&ctx->conf, "runtimeConfig.ips", &rc_ips, &n_rc, err);
	if (r >= 0)
		r = cni_conf_get_str_array(&ctx->conf, "args.cni.ips", &args_ips, &n_args, err);
	if (r >= 0 && n_rc > 0) {
		for (size_t i = 0; r >= 0 && i < n_rc; i++)
			r = add_static_ip(c, rc_ips[i], strlen(rc_ips[i]), "runtimeConfig.ips", err);
	} else if (r >= 0 && n_args > 0) {
		for (size_t i = 0; r >= 0 && i < n_args; i++)
			r = add_static_ip(c, args_ips[i], strlen(args_ips[i]), "args.cni.ips", err);
	} else if (r >= 0 && (env_ip = cni_args_get(&ctx->args, "IP")) && *env_ip) {
		/* Multus passes several addresses as "IP=ip1,ip2"; the reference took one. */
		for (const char *p = env_ip; r >= 0; p++) {
			size_t len = strcspn(p, ",");

			r = add_static_ip(c, p, len, "CNI_ARGS IP", err);
			p += len;
			if (!*p)
				break;
		}
	}
	cni_conf_strv_free(rc_ips, n_rc);
	cni_conf_strv_free(args_ips, n_args);
	return r < 0 ? r : 0;
}

/* allocateDefaultGateway, allocateIPWithIndex and static IPs exclude each other. */
static int resolve_requests(const struct cni_ctx *ctx, struct nvipam_config *c,
			    struct cni_err *err)
{
	int64_t index = 0;
	int r;

	r = cni_conf_get_bool(&ctx->conf, "args.cni.allocateDefaultGateway",
			      &c->allocate_default_gateway, err);
	if (r < 0)
		return r;
	/* The reference reads an int32: beyond that is a decode error there too. */
	r = cni_conf_get_int(&ctx->conf, "args.cni.allocateIPWithIndex", INT32_MIN, INT32_MAX, &index,
			     err);
	if (r < 0)
		return r;
	if (r > 0) {
		if (index < 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "allocateIPWithIndex can't be negative");
		c->has_index = true;
		c->index = (unsigned long)index;
	}
	r = resolve_static_ips(ctx, c, err);
	if (r < 0)
		return r;
	if (c->allocate_default_gateway && c->n_static_ips > 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "allocateDefaultGateway can't be used together with static IP request");
	if (c->allocate_default_gateway && c->has_index)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "allocateDefaultGateway can't be used together with allocateIPWithIndex");
	if (c->has_index && c->n_static_ips > 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "allocateIPWithIndex can't be used together with static IP request");
	return 0;
}

static int copy_arg(const struct cni_args *args, const char *key, char *dst, size_t size,
		    struct cni_err *err)
{
	const char *v = cni_args_get(args, key);

	dst[0] = '\0';
	if (!v)
		return 0;
	if (strlen(v) >= size)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
				   "CNI_ARGS: %s is longer than %zu bytes", key, size - 1);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/*
 * Why a string recorded with an allocation cannot be, or NULL. The reference daemon's store
 * keeps it as a JSON string: bytes that are not UTF-8 come back from it as U+FFFD, so
 * the daemon's checksum of a store handed over could never match what was written;
 * control characters have no business in a Kubernetes name.
 */
static const char *metadata_invalid(const char *v)
{
	size_t len = strlen(v);

	if (!text_utf8_valid(v, len))
		return "is not valid UTF-8";
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = text_utf8_decode(v + i, len - i, &cp);

		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
			return "holds a control character";
		i += n;
	}
	return NULL;
}

/* Recorded with the allocation; none is required (cnitool and podman send no pod). */
static int resolve_metadata(const struct cni_ctx *ctx, struct nvipam_config *c,
			    struct cni_err *err)
{
	const struct {
		const char *key;
		const char *value;
	} args[] = {
		{ "K8S_POD_NAMESPACE", c->pod_namespace },
		{ "K8S_POD_NAME", c->pod_name },
		{ "K8S_POD_UID", c->pod_uid },
	};
	const char *dev = NULL, *rc_dev = NULL, *why;
	int r;

	if ((r = copy_arg(&ctx->args, "K8S_POD_NAMESPACE", c->pod_namespace,
			  sizeof(c->pod_namespace), err)) < 0 ||
	    (r = copy_arg(&ctx->args, "K8S_POD_NAME", c->pod_name, sizeof(c->pod_name), err)) < 0 ||
	    (r = copy_arg(&ctx->args, "K8S_POD_UID", c->pod_uid, sizeof(c->pod_uid), err)) < 0)
		return r;
	/* Only ADD writes them: CHECK and STATUS of what an older build recorded still work. */
	for (size_t i = 0; ctx->env.command == CNI_CMD_ADD && i < ARRAY_SIZE(args); i++)
		if ((why = metadata_invalid(args[i].value)))
			return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL, "CNI_ARGS: %s %s",
					   args[i].key, why);
	if ((r = cni_conf_get_str(&ctx->conf, "deviceID", &dev, err)) < 0 ||
	    (r = cni_conf_get_str(&ctx->conf, "runtimeConfig.deviceID", &rc_dev, err)) < 0)
		return r;
	if (!dev || !*dev)
		dev = rc_dev ? rc_dev : "";
	if (strlen(dev) >= sizeof(c->device_id))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "deviceID is longer than %zu bytes", sizeof(c->device_id) - 1);
	if (ctx->env.command == CNI_CMD_ADD && (why = metadata_invalid(dev)))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "deviceID %s", why);
	memcpy(c->device_id, dev, strlen(dev) + 1);
	return 0;
}

DEFINE_CLEANUP_FUNC(config_freep, struct nvipam_config *, free);

int nvipam_config_load(const struct cni_ctx *ctx, enum nvipam_config_scope scope,
		       struct nvipam_config **ret, struct cni_err *err)
{
	static const char *const known_args[] = {
		"IP", "K8S_POD_NAME", "K8S_POD_NAMESPACE", "K8S_POD_UID", "K8S_POD_INFRA_CONTAINER_ID",
		NULL,
	};
	_cleanup_(json_object_putp) struct json_object *file_root = NULL;
	_cleanup_(config_freep) struct nvipam_config *c = NULL;
	struct nvipam_layer in = { 0 }, file = { 0 };
	struct json_object *ipam = NULL;
	char conf_dir[4096], conf_file[4096 + sizeof("/" NVIPAM_CONF_FILE_NAME)];
	const char *level;
	size_t len;
	int r;

	r = cni_args_check_known(&ctx->args, known_args, err);
	if (r < 0)
		return r;
	r = cjson_get_typed(ctx->conf.root, "ipam", json_type_object, &ipam, err);
	if (r < 0)
		return r;
	if (!ipam)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "IPAM config missing 'ipam' key");
	r = layer_read(ipam, "ipam", &in, err);
	if (r < 0)
		return r;
	/*
	 * Where state lives is the node's choice: a network config naming the store
	 * could put it over another store's lock or logs, or outside the node's view of
	 * what is held. Every command refuses it, DEL too: it cannot reach a store it
	 * would have to trust the config to find.
	 */
	if (in.store_file || in.pool_file || in.has_cooldown)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "ipam: %s is the node's setting, not a network config's: set it "
				   "in nv-ipam.conf of the config directory", in.store_file ?
				   "storeFile" : in.pool_file ? "poolFile" : "releasedIPCooldownSeconds");

	/* nv-ipam.conf is found through confDir, so only stdin can move it. */
	r = resolve_path("confDir", TRUST_CONF, in.conf_dir, NULL, NULL, NVIPAM_DEFAULT_CONF_DIR,
			 conf_dir, sizeof(conf_dir), err);
	if (r < 0)
		return r;
	len = strlen(conf_dir);
	while (len > 1 && conf_dir[len - 1] == '/')
		conf_dir[--len] = '\0';
	snprintf(conf_file, sizeof(conf_file), "%s%s" NVIPAM_CONF_FILE_NAME, conf_dir,
		 len > 1 ? "/" : "");
	r = conf_file_read(conf_file, &file_root, err);
	if (r < 0)
		return r;
	if (file_root && (r = layer_read(file_root, conf_file, &file, err)) < 0)
		return r;
	if (file_root)
		cni_conf_keys_warn(file_root, file_keys, conf_file);

	c = calloc(1, sizeof(*c));
	if (!c)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if ((r = resolve_path("poolFile", TRUST_CONF, NULL, file.pool_file, conf_file,
			      NVIPAM_DEFAULT_POOL_FILE, c->pool_file, sizeof(c->pool_file), err)) < 0 ||
	    (r = resolve_path("storeFile", TRUST_STATE, NULL, file.store_file, conf_file,
			      NVIPAM_DEFAULT_STORE_FILE, c->store_file, sizeof(c->store_file), err)) < 0 ||
	    (r = resolve_path("logFile", -1, in.log_file, file.log_file, conf_file, NULL,
			      c->log_file, sizeof(c->log_file), err)) < 0)
		return r;
	c->log_file_node = !in.log_file && file.log_file;
	level = in.log_level ? in.log_level : file.log_level ? file.log_level : NVIPAM_LOG_LEVEL_DEFAULT;
	if (strlen(level) >= sizeof(c->log_level))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "%s: logLevel \"%.32s...\" is not a log level",
				   in.log_level ? "ipam" : conf_file, level);
	memcpy(c->log_level, level, strlen(level) + 1);
	c->lock_timeout_ms = (unsigned int)(in.has_lock_timeout ? in.lock_timeout_ms :
					    file.has_lock_timeout ? file.lock_timeout_ms :
					    NVIPAM_DEFAULT_LOCK_TIMEOUT_MS);
	c->released_ip_cooldown_s = file.has_cooldown ? (unsigned int)file.cooldown_s : 0;

	if (scope == NVIPAM_CONFIG_STORE) {
		*ret = TAKE_PTR(c);
		return 0;
	}
	if ((r = resolve_pools(ctx, &in, &file, c, err)) < 0 ||
	    (r = resolve_pool_type(ctx, &in, &file, c, err)) < 0 ||
	    (r = resolve_requests(ctx, c, err)) < 0 ||
	    (r = resolve_metadata(ctx, c, err)) < 0)
		return r;
	*ret = TAKE_PTR(c);
	return 0;
}
