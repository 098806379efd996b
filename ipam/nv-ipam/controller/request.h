/* The controller's own API requests: a JSON object in and out, bounded in time, counted */
#pragma once

struct api_client;
struct api_status;
struct cni_err;
struct json_object;

enum request_verb { REQUEST_GET, REQUEST_POST, REQUEST_PUT, REQUEST_PATCH, REQUEST_DELETE, REQUEST_VERBS };

/**
 * request_json() - one request whose answer is a JSON object
 * @c: client
 * @method: NULL for GET, "POST", "PUT", "PATCH", "DELETE"
 * @path: escaped path (api_escape())
 * @body: the object sent, NULL for none
 * @content_type: of @body, NULL for application/json
 * @timeout_ms: the whole request
 * @ret: the object answered (2xx), NULL when not wanted
 * @st: the refusal's Status, zeroed first, filled when the server answered otherwise
 * @err: the method, the path and why
 *
 * Return: 0, api_status_errno() of a refusal (-EEXIST 409, -ENOENT 404, ...), api_call()'s
 * errors, -EBADMSG for an answer that is not a JSON object.
 */
int request_json(struct api_client *c, const char *method, const char *path,
		 struct json_object *body, const char *content_type, long timeout_ms,
		 struct json_object **ret, struct api_status *st, struct cni_err *err);

/**
 * request_counts() - requests sent so far, by verb (any thread)
 * @ret: REQUEST_VERBS counters
 */
void request_counts(unsigned long ret[REQUEST_VERBS]);

/**
 * request_verb_name() - "GET", "POST", ... for metrics
 * @v: verb
 *
 * Return: the name.
 */
const char *request_verb_name(enum request_verb v);
