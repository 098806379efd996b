/* nv-ipam.conf, as ipam-node writes it into the CNI conf directory */
#pragma once

struct cni_err;
struct node_flags;

/* What nv-ipam reads from its confDir (plugin/config.c). */
#define NODE_CONF_FILE "nv-ipam.conf"
/* The node pool file ipam-node keeps, beside it. */
#define NODE_POOL_FILE "node-pools.json"

/**
 * node_conf_text() - the file's text: the reference's keys (daemonSocket,
 *                    daemonCallTimeoutSeconds, logFile, logLevel, forcePoolName) and the
 *                    node's own, storeFile and poolFile
 * @f: the flags
 * @pool_file: the node pool file's path
 * @ret: malloc'ed text, written only on success
 *
 * Return: 0 on success, -ENOMEM.
 */
int node_conf_text(const struct node_flags *f, const char *pool_file, char **ret);

/**
 * node_conf_write() - replace <dir>/nv-ipam.conf atomically (mode 0664, as the reference),
 *                     creating the directory when missing; unchanged bytes are left alone
 * @dir: the CNI conf directory
 * @text: the contents
 * @err: code 5 naming the step that failed
 *
 * Return: 1 when written, 0 when unchanged, negative errno on failure.
 */
int node_conf_write(const char *dir, const char *text, struct cni_err *err);
