/* The controller's own API requests: a JSON object in and out, bounded in time, counted */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/api/client.h"
#include "ipam/nv-ipam/controller/request.h"

static unsigned long counts[REQUEST_VERBS];

static const char *const names[] = {
	[REQUEST_GET] = "GET", [REQUEST_POST] = "POST", [REQUEST_PUT] = "PUT",
	[REQUEST_PATCH] = "PATCH", [REQUEST_DELETE] = "DELETE",
};

const char *request_verb_name(enum request_verb v)
{
	return names[v];
}

static enum request_verb verb_of(const char *method)
{
	for (size_t i = 0; method && i < REQUEST_VERBS; i++)
		if (strcmp(method, names[i]) == 0)
			return (enum request_verb)i;
	return REQUEST_GET;
}

void request_counts(unsigned long ret[REQUEST_VERBS])
{
	for (size_t i = 0; i < REQUEST_VERBS; i++)
		ret[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
}

int request_json(struct api_client *c, const char *method, const char *path,
		 struct json_object *body, const char *content_type, long timeout_ms,
		 struct json_object **ret, struct api_status *st, struct cni_err *err)
{
	const char *text = body ? json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN) : NULL;
	struct api_request req = { .method = method, .path = path, .body = text,
				   .body_len = text ? strlen(text) : 0, .content_type = content_type,
				   .timeout_ms = timeout_ms };
	struct api_response resp = { 0 };
	int r;

	*st = (struct api_status){ 0 };
	if (body && !text)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	__atomic_add_fetch(&counts[verb_of(method)], 1, __ATOMIC_RELAXED);
	r = api_call(c, &req, &resp, err);
	if (r < 0)
		return r;
	if (resp.http < 200 || resp.http >= 300) {
		api_status_from(resp.http, resp.body, resp.len, st);
		r = cni_err_set(err, CNI_ERR_IO, api_status_errno(resp.http), "%s %s: %ld %s%s%s",
				method ? method : "GET", path, st->http, st->reason,
				st->message[0] ? ": " : "", st->message);
	} else {
		st->http = resp.http;
		if (ret)
			r = cjson_parse(resp.body, resp.len, "the answer", ret, err);
		if (ret && r < 0)
			r = cni_err_set(err, CNI_ERR_IO, -EBADMSG, "%s %s: the answer is not a JSON object",
					method ? method : "GET", path);
	}
	api_response_free(&resp);
	return r;
}
