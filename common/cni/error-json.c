/* CNI error JSON: the one printer of a recorded failure */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "common/cni/error-json.h"
#include "common/util/error.h"
#include "common/util/text.h"

/*
 * A message may hold bytes an IPAM plugin printed, or a value cut short in the
 * middle of a UTF-8 sequence: JSON output must be valid UTF-8.
 */
static struct json_object *json_text(const char *s, char *buf, size_t size)
{
	if (text_utf8_valid(s, strlen(s)))
		return json_object_new_string(s);
	text_escape(s, strlen(s), buf, size);
	return json_object_new_string(buf);
}

int cni_err_print(const struct cni_err *err, const char *cni_version, FILE *out)
{
	struct json_object *o = json_object_new_object();
	int code = err->code ? err->code : CNI_ERR_INTERNAL;
	char buf[4 * sizeof(err->details)];
	int r = 0;

	if (!o)
		return -ENOMEM;
	if (cni_version && *cni_version)
		json_object_object_add(o, "cniVersion", json_object_new_string(cni_version));
	json_object_object_add(o, "code", json_object_new_int(code));
	json_object_object_add(o, "msg", json_text(err->msg[0] ? err->msg : "unknown error", buf,
						    sizeof(buf)));
	if (err->details[0])
		json_object_object_add(o, "details", json_text(err->details, buf, sizeof(buf)));
	if (fprintf(out, "%s\n",
		    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		r = -EIO;
	json_object_put(o);
	return r;
}
