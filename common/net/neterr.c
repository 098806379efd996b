/* The kernel's error of the last netlink request: its extended-ack text, CNI errors carrying it */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/net/neterr-internal.h"
#include "common/net/neterr.h"
#include "common/util/error.h"

/*
 * The kernel's text for the last failed request. The process is
 * single-threaded and the text is read before the next request (net_err_set()),
 * so one static buffer is enough.
 */
static char ack_text[1024];

const char *net_ack_last(void)
{
	return ack_text;
}

void net_ack_set(const char *text)
{
	snprintf(ack_text, sizeof(ack_text), "%s", text ? text : "");
}

void net_ack_clear(void)
{
	ack_text[0] = '\0';
}

int net_err_op(struct cni_err *err, int r, const char *what, const char *name)
{
	return net_err_set(err, CNI_ERR_KERNEL, r, "%s \"%s\": %s", what, name, strerror(-r));
}

int net_err_set(struct cni_err *err, int code, int r, const char *fmt, ...)
{
	char msg[sizeof(err->msg)];
	va_list ap;

	if (!err || err->code != CNI_OK)
		return r;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cni_err_set(err, code, r, "%s", msg);
	if (ack_text[0])
		cni_err_details(err, "%s", ack_text);
	return r;
}
