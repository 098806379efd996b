/* What ipam-node's start checks before it touches the node: the install source, the dirs, the API */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/clock.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/daemon/klog.h"
#include "ipam/nv-ipam/node/flags.h"
#include "ipam/nv-ipam/node/node.h"

/* One request of the check: a connect that hangs must not eat the whole wait. */
#define REACH_REQUEST_MS 3000L
/* Between two tries while the API server is not there (or answers 5xx, 429). */
#define REACH_RETRY_MS 500L

/* Opened as install_binary() opens it: readable, and a regular file. */
static int check_source(const char *path, const char *what, struct cni_err *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -errno, "%s %s cannot be read: %s", what,
				   path, errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	if (!S_ISREG(st.st_mode))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s %s is not a regular file",
				   what, path);
	return 0;
}

int node_check_install(const struct node_flags *f, struct cni_err *err)
{
	const char *bin = f->cni_nv_ipam_bin_file, *slash = strrchr(bin, '/');
	_cleanup_free_ char *tool = NULL;
	int r;

	struct stat st;

	if (f->cni_skip_binary_copy)
		return 0;
	/* The flag's name says file; a directory is the likely mistake, and says its fix. */
	if (stat(bin, &st) == 0 && S_ISDIR(st.st_mode))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EISDIR,
				   "cni-nv-ipam-bin-file %s is a directory: it names the nv-ipam binary "
				   "itself, with nv-ipam-tool beside it (%s/nv-ipam)", bin, bin);
	r = check_source(bin, "cni-nv-ipam-bin-file", err);
	if (r < 0)
		return r;
	if (asprintf(&tool, "%.*snv-ipam-tool", slash ? (int)(slash - bin + 1) : 0, bin) < 0) {
		tool = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	return check_source(tool, "nv-ipam-tool (beside cni-nv-ipam-bin-file)", err);
}

int node_check_dir(const char *dir, const char *flag, struct cni_err *err)
{
	_cleanup_free_ char *at = strdup(dir);
	struct stat st;

	if (!at)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (at[0] != '/')
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL, "%s %s is not an absolute path",
				   flag, dir);
	/* The directory, or where it will be created: its nearest existing ancestor. */
	for (;;) {
		char *slash;

		if (stat(at, &st) == 0)
			break;
		if (errno != ENOENT)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -errno, "%s %s: %s: %s", flag, dir,
					   at, strerror(errno));
		slash = strrchr(at, '/');
		*(slash == at ? slash + 1 : slash) = '\0';
	}
	if (!S_ISDIR(st.st_mode))
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -ENOTDIR, "%s %s: %s is not a directory",
				   flag, dir, at);
	/* access() tells a read-only file system apart even to root. */
	if (access(at, W_OK | X_OK) < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -errno, "%s %s: %s cannot be written: %s",
				   flag, dir, at, strerror(errno));
	return 0;
}

/*
 * The answer's body is not read: a pool of a large cluster is a megabyte of JSON, ten as a
 * tree, and only the status says the server is there.
 */
static int discard(void *ctx, const char *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

int node_api_reach(struct node *n, long wait_ms, const sigset_t *sigs, struct cni_err *err)
{
	_cleanup_free_ char *ns = api_escape(n->flags->ippools_namespace), *path = NULL;
	int64_t deadline = clock_mono_ms() + wait_ms;
	struct api_client *c = NULL;
	bool said = false;
	int r;

	if (!ns || asprintf(&path, "/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/%s/ippools?limit=1",
			    ns) < 0 || api_client_new(&n->conn, n->user_agent, -1, &c) < 0) {
		path = NULL;
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	for (;;) {
		struct api_request req = { .path = path, .timeout_ms = REACH_REQUEST_MS,
					   .on_data = discard };
		struct timespec tick = { .tv_nsec = REACH_RETRY_MS * 1000000L };
		struct api_response resp = { 0 };
		struct cni_err why = { 0 };
		struct api_status st;
		long http = 0;

		r = api_call(c, &req, &resp, &why);
		if (r == 0) {
			http = resp.http;
			if (http >= 300) {
				api_status_from(resp.http, resp.body, resp.len, &st);
				snprintf(why.msg, sizeof(why.msg), "GET %s: HTTP %ld %s: %s", path,
					 resp.http, st.reason, st.message);
			}
			api_response_free(&resp);
			/* A 5xx or 429 may be a proxy before the server, or the server starting. */
			r = http == 429 || http >= 500 ? -EAGAIN : 0;
		}
		if (r == 0 && http == 401) {
			api_client_free(c);
			return cni_err_set(err, CNI_ERR_IO, -EPERM, "API server %s refused the credentials: %s",
					   n->conn.server, why.msg);
		}
		if (r == 0) {
			/* Forbidden or not found: RBAC or the CRDs not there yet. The server answered:
			 * the reflectors retry, and /readyz says not ready meanwhile. */
			if (http >= 300)
				klog_info(0, "the pools cannot be listed yet: the reflectors retry", "detail",
					  why.msg, NULL);
			break;
		}
		if (clock_mono_ms() + REACH_RETRY_MS > deadline) {
			api_client_free(c);
			return cni_err_set(err, CNI_ERR_IO, r, "API server %s not reached: %s",
					   n->conn.server, why.msg);
		}
		if (!said)
			klog_info(0, "waiting for the API server", "server", n->conn.server, "detail",
				  why.msg, NULL);
		said = true;
		if (sigtimedwait(sigs, NULL, &tick) > 0) {
			api_client_free(c);
			return cni_err_set(err, CNI_ERR_IO, -ECANCELED, "stopped while waiting for the API server");
		}
	}
	api_client_free(c);
	return 0;
}
