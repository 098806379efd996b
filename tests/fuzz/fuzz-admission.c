/*
 * libFuzzer target: the controller's validating webhook, whose port any pod can reach:
 * AdmissionReview bodies answered on both paths (the answer always one JSON document,
 * allowed or denied, never both), and the input's JSON, if any, validated as both kinds
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "ipam/nv-ipam/controller/admission.h"
#include "ipam/nv-ipam/controller/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void answer(const char *path, const char *body, size_t len)
{
	struct admission_answer a = { 0 };
	struct json_object *o;

	if (admission_review(path, body, len, &a) < 0)
		return; /* out of memory */
	o = json_tokener_parse(a.body);
	if (!o || strlen(a.body) != a.len || (a.http != 200 && a.http != 400))
		abort();
	/* Denied with a message, allowed without one, or no review (400). */
	if ((a.allowed == 1) != (a.message == NULL) || (a.allowed < 0) != (a.http == 400))
		abort();
	json_object_put(o);
	admission_answer_free(&a);
}

static void validate(const char *body, size_t len)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	struct json_object *o = tok ? json_tokener_parse_ex(tok, body, (int)len) : NULL;
	struct validate_result r = { 0 };

	json_tokener_free(tok);
	if (!o)
		return;
	for (int kind = 0; kind < 2; kind++) {
		char *msg;

		if ((kind ? validate_cidrpool(o, &r) : validate_ippool(o, &r)) < 0)
			continue;
		msg = r.n ? validate_message(&r) : NULL;
		if (msg && (!*msg || strchr(msg, '\n')))
			abort(); /* one line: every value is written as JSON */
		free(msg);
		validate_result_free(&r);
	}
	json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *body = malloc(size + 1);

	if (!body)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';
	answer(ADMISSION_PATH_IPPOOL, body, size);
	answer(ADMISSION_PATH_CIDRPOOL, body, size);
	validate(body, size);
	free(body);
	return 0;
}
