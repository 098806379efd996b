/* nv-ipam.conf, as ipam-node writes it into the CNI conf directory */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/node/conf.h"
#include "ipam/nv-ipam/node/flags.h"

#define CONF_MAX_BYTES (64u * 1024u)

int node_conf_text(const struct node_flags *f, const char *pool_file, char **ret)
{
	_cleanup_(json_object_putp) struct json_object *o = json_object_new_object();

	/*
	 * The reference's keys first, for its users and its shim; storeFile and poolFile are
	 * the node's choice of where nv-ipam's state and blocks live (a network config may
	 * not name them).
	 */
	if (!o || k8s_json_add_str(o, "daemonSocket", f->cni_daemon_socket) < 0 ||
	    k8s_json_add(o, "daemonCallTimeoutSeconds",
			 json_object_new_int64(f->cni_daemon_call_timeout)) < 0 ||
	    k8s_json_add_str(o, "logFile", f->cni_log_file) < 0 ||
	    k8s_json_add_str(o, "logLevel", f->cni_log_level) < 0 ||
	    k8s_json_add(o, "forcePoolName", json_object_new_boolean(f->cni_force_pool_name)) < 0 ||
	    k8s_json_add_str(o, "storeFile", f->store_file) < 0 ||
	    k8s_json_add_str(o, "poolFile", pool_file) < 0)
		return -ENOMEM;
	/* Only when asked for, as the reference's flag: its default, 0, leaves the file as it was. */
	if (f->released_ip_cooldown_ms > 0 &&
	    k8s_json_add(o, "releasedIPCooldownSeconds",
			 json_object_new_int64((f->released_ip_cooldown_ms + 999) / 1000)) < 0)
		return -ENOMEM;
	if (asprintf(ret, "%s\n", json_object_to_json_string_ext(o, K8S_JSON_PRETTY)) < 0)
		return -ENOMEM;
	return 0;
}

int node_conf_write(const char *dir, const char *text, struct cni_err *err)
{
	_cleanup_free_ char *path = NULL, *old = NULL;
	const char *step = "create directory";
	size_t old_len = 0;
	int r;

	if (asprintf(&path, "%s/" NODE_CONF_FILE, dir) < 0) {
		path = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	if (file_read(path, CONF_MAX_BYTES, &old, &old_len) == 0 && old_len == strlen(text) &&
	    memcmp(old, text, old_len) == 0)
		return 0;
	r = file_make_parents(path, 0755);
	if (r >= 0)
		r = file_write_atomic(path, text, strlen(text), 0664, &step);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot write %s: %s: %s", path, step, strerror(-r));
	return 1;
}
