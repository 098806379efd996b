/* CNI error: codes and the error filled at failure sites */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "common/cni/error.h"
#include "common/util/text.h"

int cni_err_set(struct cni_err *err, int code, int r, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code != CNI_OK)
		return r;
	err->code = code;
	err->errnum = r;
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

/* Appends as much of @s as fits, always terminated. */
static void append(char *buf, size_t size, const char *s)
{
	size_t o = strnlen(buf, size - 1);
	size_t n = strnlen(s, size - 1 - o);

	memcpy(buf + o, s, n);
	buf[o + n] = '\0';
}

int cni_err_prefix(struct cni_err *err, int r, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;
	int n;

	if (!err || err->code == CNI_OK)
		return r;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return r;
	/* The context first; whatever of the old message still fits after it. */
	append(msg, sizeof(msg), ": ");
	append(msg, sizeof(msg), err->msg);
	memcpy(err->msg, msg, sizeof(msg));
	return r;
}

int cni_err_code(struct cni_err *err, int code, int r)
{
	if (err && err->code != CNI_OK)
		err->code = code;
	return r;
}

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
