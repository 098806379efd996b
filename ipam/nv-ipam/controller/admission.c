/*
 * AdmissionReview requests of the validating webhook answered: allowed, or denied naming the field
 *
 * The API server posts an AdmissionReview whose request holds the object; the answer is the
 * same kind of document with a response: the request's uid, allowed, and for a denial a
 * Status whose message the user sees after "admission webhook ... denied the request: ".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json-exact.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/controller/admission.h"
#include "ipam/nv-ipam/controller/field_errors.h"
#include "ipam/nv-ipam/controller/overlap_hook.h"
#include "ipam/nv-ipam/controller/validate.h"
#include "ipam/nv-ipam/k8s/k8s.h"

static const char *member_str(struct json_object *o, const char *key)
{
	struct json_object *v = cjson_member(o, key, json_type_string);

	return v ? json_object_get_string(v) : "";
}

/* The review answered; @message NULL when allowed; @warnings (taken) NULL for none. */
static int answer_warned(struct admission_answer *a, const char *api_version, const char *uid,
			 int code, const char *message, struct json_object *warnings)
{
	_cleanup_(json_object_putp) struct json_object *review = json_object_new_object();
	struct json_object *resp = json_object_new_object(), *status = json_object_new_object();
	const char *text;
	int r;

	if (!review || !resp || !status) {
		json_object_put(resp);
		json_object_put(status);
		json_object_put(warnings);
		return -ENOMEM;
	}
	r = k8s_json_add_str(review, "apiVersion", api_version);
	r = r ? r : k8s_json_add_str(review, "kind", "AdmissionReview");
	r = r ? r : k8s_json_add(review, "response", resp);
	if (r) {
		json_object_put(status);
		json_object_put(warnings);
		return r;
	}
	r = k8s_json_add_str(resp, "uid", uid);
	r = r ? r : k8s_json_add(resp, "allowed", json_object_new_boolean(message == NULL));
	r = r ? r : k8s_json_add(resp, "status", status);
	r = r ? r : k8s_json_add(status, "code", json_object_new_int(code));
	if (warnings)
		r = r ? (json_object_put(warnings), r) : k8s_json_add(resp, "warnings", warnings);
	if (message) {
		r = r ? r : k8s_json_add_str(status, "reason", code == 403 ? "Forbidden" : "BadRequest");
		r = r ? r : k8s_json_add_str(status, "message", message);
	}
	if (r)
		return r;
	text = json_object_to_json_string_ext(review, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	a->body = text ? strdup(text) : NULL;
	if (!a->body)
		return -ENOMEM;
	a->len = strlen(a->body);
	a->allowed = message == NULL;
	if (message && !(a->message = strdup(message)))
		return -ENOMEM;
	return 0;
}

static int answer(struct admission_answer *a, const char *api_version, const char *uid, int code,
		  const char *message)
{
	return answer_warned(a, api_version, uid, code, message, NULL);
}

/* A body that is no review: HTTP 400, the reason in a review of its own. */
static int refuse(struct admission_answer *a, const char *why)
{
	int r = answer(a, "admission.k8s.io/v1", "", 400, why);

	a->http = 400;
	a->allowed = -1;
	return r;
}

int admission_review(const char *path, const char *body, size_t len, struct admission_answer *ret)
{
	return admission_review_pools(path, body, len, NULL, ret);
}

int admission_review_pools(const char *path, const char *body, size_t len,
			   const struct admission_pools *pools, struct admission_answer *ret)
{
	_cleanup_(json_object_putp) struct json_object *review = NULL;
	struct admission_answer a = { .http = 200 };
	struct validate_result res = { 0 };
	struct json_object *req, *obj;
	struct cni_err err = { 0 };
	const char *kind, *api_version, *op, *want_kind;
	bool cidrpool;
	int r;

	if (strcmp(path, ADMISSION_PATH_IPPOOL) == 0)
		cidrpool = false;
	else if (strcmp(path, ADMISSION_PATH_CIDRPOOL) == 0)
		cidrpool = true;
	else
		return -ENOENT;
	want_kind = cidrpool ? "CIDRPool" : "IPPool";
	snprintf(a.kind, sizeof(a.kind), "%s", want_kind);
	if (cjson_parse(body, len, "AdmissionReview", &review, &err) < 0) {
		r = refuse(&a, err.msg);
		goto out;
	}
	api_version = member_str(review, "apiVersion");
	req = cjson_member(review, "request", json_type_object);
	if (strcmp(member_str(review, "kind"), "AdmissionReview") != 0 || !req ||
	    (strcmp(api_version, "admission.k8s.io/v1") != 0 &&
	     strcmp(api_version, "admission.k8s.io/v1beta1") != 0)) {
		r = refuse(&a, "the body is not an AdmissionReview (admission.k8s.io/v1) with a request");
		goto out;
	}
	op = member_str(req, "operation");
	obj = cjson_member(req, "object", json_type_object);
	kind = member_str(cjson_member(req, "kind", json_type_object), "kind");
	snprintf(a.name, sizeof(a.name), "%s", member_str(req, "name"));
	if (strcmp(op, "DELETE") == 0 || strcmp(op, "CONNECT") == 0) {
		r = answer(&a, api_version, member_str(req, "uid"), 200, NULL);
		goto out;
	}
	if (!obj || (*kind && strcmp(kind, want_kind) != 0)) {
		char why[160];

		snprintf(why, sizeof(why), "the request holds no %s object (kind \"%.32s\")", want_kind, kind);
		r = answer(&a, api_version, member_str(req, "uid"), 400, why);
		goto out;
	}
	if (!a.name[0])
		snprintf(a.name, sizeof(a.name), "%s", member_str(cjson_member(obj, "metadata", json_type_object), "name"));
	r = cidrpool ? validate_cidrpool(obj, &res) : validate_ippool(obj, &res);
	if (r == 0) {
		_cleanup_free_ char *msg = res.n ? validate_message(&res) : NULL;
		struct json_object *warnings = NULL;

		if (res.n && !msg)
			r = -ENOMEM;
		else if (!res.n)
			r = overlap_hook_check(obj, pools, &warnings, &msg);
		a.warnings = warnings ? json_object_array_length(warnings) : 0;
		if (r == 0)
			r = answer_warned(&a, api_version, member_str(req, "uid"), msg ? 403 : 200, msg,
					  warnings);
	}
	validate_result_free(&res);
out:
	if (r < 0) {
		admission_answer_free(&a);
		return r;
	}
	*ret = a;
	return 0;
}

void admission_answer_free(struct admission_answer *a)
{
	if (!a)
		return;
	free(a->body);
	free(a->message);
	*a = (struct admission_answer){ 0 };
}
