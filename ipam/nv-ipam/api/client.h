/* HTTPS requests to the Kubernetes API server through libcurl: buffered, streamed, cancellable */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct api_conn;
struct cni_err;
struct json_object;

/* One thread's handle on the API server: its libcurl handles and their live connection. */
struct api_client;

/* What the server said about a request it did not carry out (its Status object). */
struct api_status {
	long http;          /* HTTP status, 0 when no answer came */
	char reason[64];    /* Status.reason: "Forbidden", "NotFound", "Expired", "Conflict", ... */
	char message[512];  /* Status.message, escaped for a log line */
};

/* A buffered response body larger than this is refused unless a request says otherwise. */
#define API_BODY_MAX_BYTES (64u << 20)

struct api_request {
	const char *method;        /* NULL: GET */
	const char *path;          /* "/api/v1/pods?fieldSelector=...", escaped (api_escape()) */
	const char *body;          /* NULL: none */
	size_t body_len;
	const char *content_type;  /* of @body ("application/merge-patch+json"); NULL: JSON */
	long timeout_ms;           /* the whole request; 0: no limit (a watch) */
	long idle_timeout_s;       /* give up when nothing arrives for this long; 0: no limit */
	/*
	 * Streamed: every piece of a 2xx response's body goes to @on_data as it arrives (nothing
	 * is kept); it returns 0 to go on or a negative errno that ends the request with it.
	 * Otherwise the body is kept whole, up to @max_body bytes (0: API_BODY_MAX_BYTES).
	 */
	int (*on_data)(void *ctx, const char *data, size_t len);
	void *ctx;
	size_t max_body;
};

struct api_response {
	long http;
	char *body; /* NUL-terminated, malloc'ed; for a streamed 2xx response, NULL */
	size_t len;
};

/**
 * api_init() - set libcurl up; once, before any thread starts
 *
 * Return: 0 on success, -ENOMEM.
 */
int api_init(void);

/**
 * api_cleanup() - undo api_init() once every client is freed
 */
void api_cleanup(void);

/**
 * api_client_new() - a client for one thread
 * @conn: the connection (shared by every client; outlives them)
 * @user_agent: User-Agent header ("ipam-node/0.1.0")
 * @stop_fd: a descriptor that becomes readable when every request must end at once (an
 *           eventfd written on SIGTERM); -1 for none
 * @ret: the client, written only on success; release with api_client_free()
 *
 * Return: 0 on success, -ENOMEM.
 */
int api_client_new(const struct api_conn *conn, const char *user_agent, int stop_fd,
		   struct api_client **ret);

/**
 * api_client_free() - release a client
 * @c: client (NULL does nothing)
 */
void api_client_free(struct api_client *c);

/**
 * api_call() - one request
 * @c: client
 * @req: the request
 * @ret: the answer (any HTTP status), written only on success; release with
 *       api_response_free()
 * @err: why no answer came: the server unreachable or the TLS check failed (code 5 with
 *       libcurl's words), the token unreadable, @stop_fd readable, a timeout, @on_data's error
 *
 * A 401 with a token read from a file makes the file be read again; the request is sent
 * once more when that gives another token (it rotated).
 *
 * Return: 0 on an answer, -ECANCELED (stopped), -ETIMEDOUT, -ECONNREFUSED, -EPROTO (TLS),
 * -EFBIG (body too large), -ECONNRESET, @on_data's error or another negative errno.
 */
int api_call(struct api_client *c, const struct api_request *req, struct api_response *ret,
	     struct cni_err *err);

/**
 * api_response_free() - release an answer's body and zero it
 * @r: answer
 */
void api_response_free(struct api_response *r);

/**
 * api_status_from() - what a failed answer says: its Status object's reason and message
 * @http: the answer's HTTP status
 * @body: its body (NULL or not a Status: the reason is the HTTP status's name)
 * @len: the body's length
 * @ret: filled; the message escaped, never longer than its buffer
 */
void api_status_from(long http, const char *body, size_t len, struct api_status *ret);

/**
 * api_status_errno() - the negative errno a failed answer stands for
 * @http: HTTP status
 *
 * Return: -EPERM (401, 403), -ENOENT (404), -EEXIST (409: AlreadyExists or Conflict,
 * see the reason), -ESTALE (410: the resourceVersion is gone), -EAGAIN (429, 5xx),
 * -EPROTO otherwise.
 */
int api_status_errno(long http);

/**
 * api_json() - a request whose answer is one JSON object (GET, PUT, PATCH, POST, DELETE)
 * @c: client
 * @method: NULL for GET
 * @path: as in struct api_request
 * @body: the object sent, NULL for none
 * @content_type: of @body, NULL for application/json (a PATCH names its kind)
 * @ret: the object answered (2xx), written only on success; release with json_object_put()
 * @ret_status: the failure's Status, filled whenever the server answered (may be NULL)
 * @err: code 5 naming the method, the path, the HTTP status and the server's message
 *
 * Return: 0 on success, api_status_errno() of a refusal, api_call()'s errors, -EBADMSG
 * for a 2xx answer that is not a JSON object.
 */
int api_json(struct api_client *c, const char *method, const char *path,
	     struct json_object *body, const char *content_type, struct json_object **ret,
	     struct api_status *ret_status, struct cni_err *err);

/**
 * api_escape() - a string percent-encoded for a URL path segment or query value
 * @s: string
 *
 * Return: malloc'ed text (only A-Z a-z 0-9 - . _ ~ left as they are), NULL when out of memory.
 */
char *api_escape(const char *s);
