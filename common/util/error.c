/* CNI error: codes and the error filled at failure sites */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/util/error.h"

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
