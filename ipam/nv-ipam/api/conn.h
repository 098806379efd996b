/* Where the API server is and who we are to it: a pod's service account, or a kubeconfig */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct api_token;
struct cni_err;

/* Where kubelet mounts a pod's service account: token, ca.crt, namespace. */
#define API_SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* A kubeconfig (or a CA, certificate or key it names) larger than this is refused. */
#define API_CONN_FILE_MAX_BYTES (4u << 20)

struct api_conn {
	char *server;         /* "https://host:port", no trailing '/' */
	char *origin;         /* "in-cluster (<dir>)" or "kubeconfig <path>", for messages */
	char *ca_file;        /* PEM bundle the server's certificate is checked against */
	char *ca_pem;         /* or its contents (certificate-authority-data) */
	size_t ca_pem_len;
	bool insecure;        /* insecure-skip-tls-verify: no check at all */
	char *cert_file;      /* client certificate and key: files ... */
	char *key_file;
	char *cert_pem;       /* ... or contents */
	size_t cert_pem_len;
	char *key_pem;
	size_t key_pem_len;
	struct api_token *token; /* NULL when the client authenticates by certificate only */
};

/**
 * api_conn_in_cluster() - the connection of a pod: $KUBERNETES_SERVICE_HOST and
 *                         $KUBERNETES_SERVICE_PORT, the service account's token and CA
 * @sa_dir: the service account directory (API_SERVICE_ACCOUNT_DIR in a pod)
 * @ret: connection, written only on success; release with api_conn_free()
 * @err: code 7 when the variables are missing or invalid, 5 when the CA is unreadable
 *
 * The token is read from "<sa_dir>/token" at each request that finds it rotated.
 *
 * Return: 0 on success, negative errno on failure.
 */
int api_conn_in_cluster(const char *sa_dir, struct api_conn *ret, struct cni_err *err);

/**
 * api_conn_kubeconfig() - the connection a kubeconfig file's current context names
 * @path: the file (YAML or JSON)
 * @ret: connection, written only on success
 * @err: code 5 when unreadable, 7 when it does not parse, names no usable context, cluster
 *       or user, or asks for what this client does not do (exec and auth-provider plugins,
 *       basic authentication, proxies)
 *
 * Relative file names in it are relative to its directory, as kubectl reads them. A user's
 * tokenFile is re-read when it changes.
 *
 * Return: 0 on success, negative errno on failure.
 */
int api_conn_kubeconfig(const char *path, struct api_conn *ret, struct cni_err *err);

/**
 * api_conn_load() - the connection as controller-runtime finds one
 * @kubeconfig: the --kubeconfig flag, NULL or "" when not given
 * @ret: connection, written only on success
 * @err: as api_conn_in_cluster() and api_conn_kubeconfig(), code 7 when there is none
 *
 * The flag's file; else the first file of $KUBECONFIG that exists (files are not merged);
 * else the pod's service account when $KUBERNETES_SERVICE_HOST is set; else
 * $HOME/.kube/config.
 *
 * Return: 0 on success, negative errno on failure.
 */
int api_conn_load(const char *kubeconfig, struct api_conn *ret, struct cni_err *err);

/**
 * api_conn_free() - release a connection and zero it
 * @c: connection
 */
void api_conn_free(struct api_conn *c);
