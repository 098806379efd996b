/* CNI error: codes and the error filled at failure sites */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <json-c/json.h>

#include "common/cni/error.h"

int cni_err_set(struct cni_err *err, int code, int r, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != CNI_OK)
		return r;
	err->code = code;
	err->details[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return r;
}

void cni_err_details(struct cni_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->details, sizeof(err->details), fmt, ap);
	va_end(ap);
}

int cni_err_print(const struct cni_err *err, const char *cni_version, FILE *out)
{
	struct json_object *o = json_object_new_object();
	int code = err->code ? err->code : CNI_ERR_INTERNAL;
	int r = 0;

	if (!o)
		return -ENOMEM;
	if (cni_version && *cni_version)
		json_object_object_add(o, "cniVersion", json_object_new_string(cni_version));
	json_object_object_add(o, "code", json_object_new_int(code));
	json_object_object_add(o, "msg", json_object_new_string(err->msg[0] ? err->msg : "unknown error"));
	if (err->details[0])
		json_object_object_add(o, "details", json_object_new_string(err->details));
	if (fprintf(out, "%s\n",
		    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE)) < 0)
		r = -EIO;
	json_object_put(o);
	return r;
}
