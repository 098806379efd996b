/* A bearer token for the API server: given once, or read from a file that is re-read when it rotates */
#pragma once

#include <stdbool.h>

struct api_token;
struct cni_err;

/* A token file holds one token; kubelet's are about 1 KiB. */
#define API_TOKEN_MAX_BYTES (64u * 1024u)

/* How long a token read from a file is used without looking at the file again. */
#define API_TOKEN_RECHECK_SECONDS 60

/**
 * api_token_new_file() - a token kept in a file (a service account's projected token)
 * @path: the file, read at every api_token_get() that finds it changed
 * @ret: the token source, written only on success; release with api_token_free()
 *
 * Kubelet rotates a projected token by swapping a symbolic link to a new directory, and
 * kubeconfig tokenFile users rewrite their file: either shows as another inode, size or
 * modification time. The file is not read here: a missing file fails the first request.
 *
 * Return: 0 on success, -ENOMEM.
 */
int api_token_new_file(const char *path, struct api_token **ret);

/**
 * api_token_new_static() - a token given as a string (a kubeconfig's "token")
 * @token: the token (copied)
 * @ret: the token source, written only on success
 *
 * Return: 0 on success, -EINVAL for a token that cannot go into an HTTP header, -ENOMEM.
 */
int api_token_new_static(const char *token, struct api_token **ret);

/**
 * api_token_get() - the current token
 * @t: token source (may be used from several threads)
 * @reread: read the file even if it looks unchanged (the server refused the token)
 * @ret: malloc'ed copy, written only on success
 * @err: code 5 naming the file when it cannot be read, 7 when it holds no usable token
 *
 * A file is looked at again when API_TOKEN_RECHECK_SECONDS have passed, @reread is set or
 * a stat() shows another file; whitespace around the token is dropped.
 *
 * Return: 0 on success, negative errno on failure.
 */
int api_token_get(struct api_token *t, bool reread, char **ret, struct cni_err *err);

/**
 * api_token_path() - the file a token comes from
 * @t: token source
 *
 * Return: the path, NULL for a static token.
 */
const char *api_token_path(const struct api_token *t);

/**
 * api_token_free() - release a token source
 * @t: token source (NULL does nothing)
 */
void api_token_free(struct api_token *t);
