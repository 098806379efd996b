/* ipam-node's log lines in the Kubernetes components' formats: klog text or JSON */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/util/log.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/daemon/klog.h"

/* Set once at start, before any thread: read-only afterwards. */
static struct {
	enum klog_format format;
	int verbosity;
	int fd;
} klog = { KLOG_TEXT, 0, -1 };

void klog_setup(enum klog_format format, int verbosity, int fd)
{
	klog.format = format;
	klog.verbosity = verbosity;
	klog.fd = fd;
}

bool klog_enabled(int v)
{
	return v <= klog.verbosity;
}

/* "value" as klog's text format quotes it: escaped, the quote itself too. */
static void put_quoted(struct text_buf *b, const char *s)
{
	text_buf_putc(b, '"');
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "\"");

		text_buf_put_escaped(b, p, n);
		p += n;
		if (*p == '"') {
			text_buf_puts(b, "\\\"");
			p++;
		}
	}
	text_buf_putc(b, '"');
}

static const char *base_name(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash ? slash + 1 : file;
}

static void put_text_head(struct text_buf *b, enum klog_severity sev, const struct timespec *ts,
			  const char *file, int line)
{
	static const char letters[] = { [KLOG_INFO] = 'I', [KLOG_WARNING] = 'W', [KLOG_ERROR] = 'E' };
	char head[96];
	struct tm tm;

	gmtime_r(&ts->tv_sec, &tm);
	snprintf(head, sizeof(head), "%c%02d%02d %02d:%02d:%02d.%06ld %7ld %s:%d] ", letters[sev],
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000,
		 (long)syscall(SYS_gettid), base_name(file), line);
	text_buf_puts(b, head);
}

static void put_json_key(struct text_buf *b, const char *key)
{
	text_buf_putc(b, ',');
	text_buf_put_json_str(b, key, TEXT_JSON_PLAIN);
	text_buf_putc(b, ':');
}

void klog_emit(enum klog_severity sev, int v, const char *file, int line, const char *err,
	       const char *msg, ...)
{
	struct text_buf b = { 0 };
	struct timespec ts;
	char num[64];
	va_list ap;
	int fd;

	if (sev == KLOG_INFO && !klog_enabled(v))
		return;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	text_buf_reserve(&b, 256);
	if (klog.format == KLOG_JSON) {
		snprintf(num, sizeof(num), "{\"ts\":%lld.%06ld", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
			 ts.tv_nsec % 1000000);
		text_buf_puts(&b, num);
		put_json_key(&b, "caller");
		snprintf(num, sizeof(num), "%s:%d", base_name(file), line);
		text_buf_put_json_str(&b, num, TEXT_JSON_PLAIN);
		put_json_key(&b, "msg");
		text_buf_put_json_str(&b, msg, TEXT_JSON_PLAIN);
		if (sev == KLOG_ERROR) {
			put_json_key(&b, "err");
			text_buf_put_json_str(&b, err ? err : "", TEXT_JSON_PLAIN);
		} else {
			/* The JSON format has no warning level: a warning is an info line at 0. */
			snprintf(num, sizeof(num), ",\"v\":%d", sev == KLOG_INFO ? v : 0);
			text_buf_puts(&b, num);
		}
	} else {
		put_text_head(&b, sev, &ts, file, line);
		put_quoted(&b, msg);
		if (err) {
			text_buf_puts(&b, " err=");
			put_quoted(&b, err);
		}
	}
	va_start(ap, msg);
	for (const char *key; (key = va_arg(ap, const char *));) {
		const char *val = va_arg(ap, const char *);

		if (!val)
			val = "";
		if (klog.format == KLOG_JSON) {
			put_json_key(&b, key);
			text_buf_put_json_str(&b, val, TEXT_JSON_PLAIN);
		} else {
			text_buf_putc(&b, ' ');
			text_buf_put_escaped(&b, key, strlen(key));
			text_buf_putc(&b, '=');
			put_quoted(&b, val);
		}
	}
	va_end(ap);
	text_buf_puts(&b, klog.format == KLOG_JSON ? "}\n" : "\n");
	fd = klog.fd >= 0 ? klog.fd : klog.format == KLOG_JSON ? STDOUT_FILENO : STDERR_FILENO;
	/* One write per line: lines of several threads stay whole. */
	if (!b.oom)
		(void)!write(fd, b.data, b.len);
	text_buf_free(&b);
}

void klog_sink(void *ctx, enum log_level level, const char *file, int line, const char *msg)
{
	(void)ctx;
	switch (level) {
	case LOG_LEVEL_ERROR:
		klog_emit(KLOG_ERROR, 0, file, line, NULL, msg, NULL);
		break;
	case LOG_LEVEL_WARNING:
		klog_emit(KLOG_WARNING, 0, file, line, NULL, msg, NULL);
		break;
	case LOG_LEVEL_INFO:
		klog_emit(KLOG_INFO, 0, file, line, NULL, msg, NULL);
		break;
	case LOG_LEVEL_DEBUG:
		klog_emit(KLOG_INFO, KLOG_V_DEBUG, file, line, NULL, msg, NULL);
		break;
	}
}
