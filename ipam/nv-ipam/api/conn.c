/* Where the API server is and who we are to it: a pod's service account, or a kubeconfig */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/api/conn.h"
#include "ipam/nv-ipam/api/token.h"
#include "ipam/nv-ipam/api/yaml.h"

static int oom(struct cni_err *err)
{
	return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
}

/* A host as a URL writes it: an IPv6 address in brackets. */
static int server_url(const char *host, const char *port, char **ret)
{
	bool v6 = strchr(host, ':') && host[0] != '[';

	return asprintf(ret, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port) < 0 ? -ENOMEM
												   : 0;
}

static bool valid_port(const char *s)
{
	char *end;
	long v;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return false;
	v = strtol(s, &end, 10);
	return v > 0 && v <= 65535;
}

/* Host names and addresses only: nothing that could bend the URL. */
static bool valid_host(const char *s)
{
	return *s && strlen(s) < 256 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") ==
		       strlen(s);
}

int api_conn_in_cluster(const char *sa_dir, struct api_conn *ret, struct cni_err *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
	struct api_conn c = { 0 };
	_cleanup_free_ char *token_path = NULL;
	struct stat st;
	int r;

	if (!host || !*host || !port || !*port)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENOENT,
				   "unable to load in-cluster configuration: KUBERNETES_SERVICE_HOST and "
				   "KUBERNETES_SERVICE_PORT must be defined");
	if (!valid_host(host) || !valid_port(port))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "unable to load in-cluster configuration: KUBERNETES_SERVICE_HOST or "
				   "KUBERNETES_SERVICE_PORT is not a host and a port");
	if (server_url(host, port, &c.server) < 0)
		c.server = NULL;
	if (asprintf(&c.ca_file, "%s/ca.crt", sa_dir) < 0)
		c.ca_file = NULL;
	if (asprintf(&token_path, "%s/token", sa_dir) < 0)
		token_path = NULL;
	if (asprintf(&c.origin, "in-cluster (%s)", sa_dir) < 0)
		c.origin = NULL;
	if (!c.server || !c.ca_file || !token_path || !c.origin) {
		api_conn_free(&c);
		return oom(err);
	}
	if (stat(c.ca_file, &st) < 0) {
		r = cni_err_set(err, CNI_ERR_IO, -errno, "unable to load in-cluster configuration: %s: %s",
				c.ca_file, strerror(errno));
		api_conn_free(&c);
		return r;
	}
	if (api_token_new_file(token_path, &c.token) < 0) {
		api_conn_free(&c);
		return oom(err);
	}
	*ret = c;
	return 0;
}

/* ---- kubeconfig ---- */

static int b64_value(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

/* Standard base64 with padding, whitespace ignored (kubeconfig's *-data fields). */
static int b64_decode(const char *s, char **ret, size_t *ret_len)
{
	size_t n = strlen(s), len = 0, pad = 0;
	_cleanup_free_ char *out = malloc(n / 4 * 3 + 4);
	unsigned int acc = 0, bits = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int v;

		if (strchr(" \t\r\n", s[i]))
			continue;
		if (s[i] == '=') {
			pad++;
			continue;
		}
		v = b64_value(s[i]);
		if (v < 0 || pad)
			return -EINVAL;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[len++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (pad > 2 || len == 0)
		return -EINVAL;
	out[len] = '\0';
	*ret = TAKE_PTR(out);
	*ret_len = len;
	return 0;
}

/* The member @name of the list @key whose "name" is @name, its @inner object. */
static struct json_object *named(struct json_object *root, const char *key, const char *name,
				 const char *inner)
{
	struct json_object *arr = NULL;

	if (!json_object_object_get_ex(root, key, &arr) || !json_object_is_type(arr, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *e = json_object_array_get_idx(arr, i), *n = NULL, *v = NULL;

		if (json_object_object_get_ex(e, "name", &n) && json_object_is_type(n, json_type_string) &&
		    strcmp(json_object_get_string(n), name) == 0 &&
		    json_object_object_get_ex(e, inner, &v) && json_object_is_type(v, json_type_object))
			return v;
	}
	return NULL;
}

/* https://host[:port][/path]: printable, nothing that ends or bends the URL. */
static bool valid_server(const char *s)
{
	if (strncmp(s, "https://", 8) != 0 || !s[8] || s[8] == '/')
		return false;
	for (const char *p = s + 8; *p; p++)
		if (*p <= ' ' || *p > '~' || strchr("?#\"\\@", *p))
			return false;
	return true;
}

struct kc {
	const char *path;
	char *dir;            /* for relative file names */
	struct cni_err *err;
};

static int kc_bad(struct kc *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int kc_bad(struct kc *k, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cni_err_set(k->err, CNI_ERR_INVALID_CONFIG, -EINVAL, "kubeconfig %s: %s", k->path, msg);
}

static int kc_str(struct kc *k, struct json_object *o, const char *where, const char *key,
		  const char **ret)
{
	struct json_object *v;
	char what[160];

	if (cjson_member_get(o, key, json_type_string, &v) < 0) {
		snprintf(what, sizeof(what), "%s.%s", where, key);
		return kc_bad(k, "%s is not a string", what);
	}
	*ret = v ? json_object_get_string(v) : "";
	return 0;
}

/* A file name as kubectl resolves it: relative to the kubeconfig's directory. */
static int kc_file(struct kc *k, const char *name, char **ret)
{
	if (name[0] == '/' || !k->dir)
		*ret = strdup(name);
	else if (asprintf(ret, "%s/%s", k->dir, name) < 0)
		*ret = NULL;
	return *ret ? 0 : oom(k->err);
}

static int kc_data(struct kc *k, const char *where, const char *key, const char *b64, char **ret,
		   size_t *ret_len)
{
	char what[160];
	int r = b64_decode(b64, ret, ret_len);

	if (r == -ENOMEM)
		return oom(k->err);
	if (r < 0) {
		snprintf(what, sizeof(what), "%s.%s", where, key);
		return kc_bad(k, "%s is not base64", what);
	}
	return 0;
}

static int kc_cluster(struct kc *k, struct json_object *cl, struct api_conn *c)
{
	const char *server, *ca, *ca_data, *proxy;
	struct json_object *insecure = NULL;
	int r;

	if ((r = kc_str(k, cl, "cluster", "server", &server)) < 0 ||
	    (r = kc_str(k, cl, "cluster", "certificate-authority", &ca)) < 0 ||
	    (r = kc_str(k, cl, "cluster", "certificate-authority-data", &ca_data)) < 0 ||
	    (r = kc_str(k, cl, "cluster", "proxy-url", &proxy)) < 0)
		return r;
	if (!valid_server(server))
		return kc_bad(k, "the cluster's server \"%.200s\" is not an https:// URL", server);
	if (*proxy)
		return kc_bad(k, "%s", "proxy-url is not supported");
	c->server = strdup(server);
	if (!c->server)
		return oom(k->err);
	while (strlen(c->server) > 8 && c->server[strlen(c->server) - 1] == '/')
		c->server[strlen(c->server) - 1] = '\0';
	if (*ca_data)
		r = kc_data(k, "cluster", "certificate-authority-data", ca_data, &c->ca_pem, &c->ca_pem_len);
	else if (*ca)
		r = kc_file(k, ca, &c->ca_file);
	if (r < 0)
		return r;
	if (json_object_object_get_ex(cl, "insecure-skip-tls-verify", &insecure) &&
	    !json_object_is_type(insecure, json_type_null)) {
		if (!json_object_is_type(insecure, json_type_boolean))
			return kc_bad(k, "%s is not a boolean", "cluster.insecure-skip-tls-verify");
		c->insecure = json_object_get_boolean(insecure);
	}
	return 0;
}

static int kc_user(struct kc *k, struct json_object *u, struct api_conn *c)
{
	static const char *const unsupported[] = { "exec", "auth-provider", "username", "password",
						   "as", "as-groups", NULL };
	const char *token, *token_file, *cert, *cert_data, *key, *key_data;
	int r;

	for (size_t i = 0; unsupported[i]; i++) {
		struct json_object *v = NULL;

		if (json_object_object_get_ex(u, unsupported[i], &v) &&
		    !json_object_is_type(v, json_type_null))
			return kc_bad(k, "the user's \"%s\" is not supported (a token, a token file or a "
				      "client certificate is)", unsupported[i]);
	}
	if ((r = kc_str(k, u, "user", "token", &token)) < 0 ||
	    (r = kc_str(k, u, "user", "tokenFile", &token_file)) < 0 ||
	    (r = kc_str(k, u, "user", "client-certificate", &cert)) < 0 ||
	    (r = kc_str(k, u, "user", "client-certificate-data", &cert_data)) < 0 ||
	    (r = kc_str(k, u, "user", "client-key", &key)) < 0 ||
	    (r = kc_str(k, u, "user", "client-key-data", &key_data)) < 0)
		return r;
	if (*token) {
		r = api_token_new_static(token, &c->token);
		if (r == -EINVAL)
			return kc_bad(k, "%s", "the user's token is not printable ASCII");
	} else if (*token_file) {
		_cleanup_free_ char *path = NULL;

		r = kc_file(k, token_file, &path);
		if (r < 0)
			return r;
		r = api_token_new_file(path, &c->token);
	}
	if (r < 0)
		return oom(k->err);
	if (*cert_data)
		r = kc_data(k, "user", "client-certificate-data", cert_data, &c->cert_pem, &c->cert_pem_len);
	else if (*cert)
		r = kc_file(k, cert, &c->cert_file);
	if (r < 0)
		return r;
	if (*key_data)
		r = kc_data(k, "user", "client-key-data", key_data, &c->key_pem, &c->key_pem_len);
	else if (*key)
		r = kc_file(k, key, &c->key_file);
	if (r < 0)
		return r;
	if (!!(c->cert_pem || c->cert_file) != !!(c->key_pem || c->key_file))
		return kc_bad(k, "%s", "the user has a client certificate without its key, or a key "
			      "without its certificate");
	return 0;
}

int api_conn_kubeconfig(const char *path, struct api_conn *ret, struct cni_err *err)
{
	_cleanup_(json_object_putp) struct json_object *root = NULL;
	_cleanup_free_ char *buf = NULL, *dir = NULL;
	struct api_conn c = { 0 };
	struct kc k = { .path = path, .err = err };
	struct json_object *ctx, *cl, *u;
	const char *current, *cluster_name, *user_name;
	char *slash;
	size_t len = 0;
	int r;

	r = file_read(path, API_CONN_FILE_MAX_BYTES, &buf, &len);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read kubeconfig %s: %s", path,
				   r == -EFBIG ? "too large" : strerror(-r));
	r = api_yaml_parse(buf, len, path, &root, err);
	if (r < 0)
		return r;
	if (!json_object_is_type(root, json_type_object))
		return kc_bad(&k, "%s", "not a kubeconfig (no mapping at the top)");
	dir = strdup(path);
	if (!dir)
		return oom(err);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	k.dir = slash ? dir : NULL;

	if ((r = kc_str(&k, root, "", "current-context", &current)) < 0)
		return r;
	if (!*current)
		return kc_bad(&k, "%s", "no current-context");
	ctx = named(root, "contexts", current, "context");
	if (!ctx)
		return kc_bad(&k, "context \"%.200s\" not found", current);
	if ((r = kc_str(&k, ctx, "context", "cluster", &cluster_name)) < 0 ||
	    (r = kc_str(&k, ctx, "context", "user", &user_name)) < 0)
		return r;
	cl = named(root, "clusters", cluster_name, "cluster");
	if (!cl)
		return kc_bad(&k, "cluster \"%.200s\" not found", cluster_name);
	u = *user_name ? named(root, "users", user_name, "user") : NULL;
	if (*user_name && !u)
		return kc_bad(&k, "user \"%.200s\" not found", user_name);
	r = kc_cluster(&k, cl, &c);
	if (r >= 0 && u)
		r = kc_user(&k, u, &c);
	if (r >= 0 && asprintf(&c.origin, "kubeconfig %s", path) < 0) {
		c.origin = NULL;
		r = oom(err);
	}
	if (r < 0) {
		api_conn_free(&c);
		return r;
	}
	*ret = c;
	return 0;
}

int api_conn_load(const char *kubeconfig, struct api_conn *ret, struct cni_err *err)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	_cleanup_free_ char *list = NULL, *home_config = NULL;
	struct stat st;

	if (kubeconfig && *kubeconfig)
		return api_conn_kubeconfig(kubeconfig, ret, err);
	if (env && *env) {
		char *save = NULL;

		list = strdup(env);
		if (!list)
			return oom(err);
		for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save))
			if (stat(p, &st) == 0)
				return api_conn_kubeconfig(p, ret, err);
	}
	if (getenv("KUBERNETES_SERVICE_HOST"))
		return api_conn_in_cluster(API_SERVICE_ACCOUNT_DIR, ret, err);
	if (home && *home) {
		if (asprintf(&home_config, "%s/.kube/config", home) < 0) {
			home_config = NULL;
			return oom(err);
		}
		if (stat(home_config, &st) == 0)
			return api_conn_kubeconfig(home_config, ret, err);
	}
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENOENT,
			   "no API server configured: not in a pod (KUBERNETES_SERVICE_HOST unset), "
			   "no --kubeconfig, no $KUBECONFIG file and no $HOME/.kube/config");
}

static void free_secret(char *s, size_t len)
{
	if (s)
		explicit_bzero(s, len);
	free(s);
}

void api_conn_free(struct api_conn *c)
{
	if (!c)
		return;
	free(c->server);
	free(c->origin);
	free(c->ca_file);
	free(c->ca_pem);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_pem);
	free_secret(c->key_pem, c->key_pem_len);
	api_token_free(c->token);
	*c = (struct api_conn){ 0 };
}
