/* Logging to stderr and a log file, or to a program's own sink; stdout stays the protocol channel */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "common/util/text.h"

/*
 * One process-wide state, set before any thread starts and only read afterwards: a
 * plugin is single-threaded, a daemon's threads log through its sink.
 */
static struct {
	const char *prog;
	enum log_level level;
	enum log_level stderr_level;
	int fd;
	log_sink_fn *sink;
	void *sink_ctx;
} log_state = { "cni", LOG_LEVEL_INFO, LOG_LEVEL_INFO, -1, NULL, NULL };

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARNING] = "warning",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void log_setup(const char *prog, enum log_level level, enum log_level stderr_level, int fd)
{
	log_state.prog = prog;
	log_state.level = level;
	log_state.stderr_level = stderr_level;
	if (log_state.fd >= 0 && log_state.fd != fd)
		close(log_state.fd);
	log_state.fd = fd;
}

void log_set_sink(log_sink_fn *fn, void *ctx)
{
	log_state.sink = fn;
	log_state.sink_ctx = ctx;
}

int log_level_parse(const char *s, enum log_level *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*ret = (enum log_level)i;
			return 0;
		}
	}
	/* nv-ipam's spelling of the most detailed level. */
	if (strcasecmp(s, "verbose") == 0) {
		*ret = LOG_LEVEL_DEBUG;
		return 0;
	}
	return -EINVAL;
}

/* The plugins' line: time, program, pid and level, the message escaped. */
static void write_line(enum log_level level, const char *msg)
{
	char line[2048 + 128];
	char stamp[40];
	struct timespec ts;
	struct tm tm;
	int n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "%s.%03ldZ %s[%d] %s: ", stamp, ts.tv_nsec / 1000000,
		     log_state.prog, (int)getpid(), level_names[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	n += (int)text_escape(msg, strlen(msg), line + n, sizeof(line) - (size_t)n - 1);
	line[n++] = '\n';
	if (level <= log_state.stderr_level)
		(void)!write(STDERR_FILENO, line, (size_t)n);
	if (log_state.fd >= 0)
		(void)!write(log_state.fd, line, (size_t)n);
}

void log_msg(enum log_level level, const char *file, int line, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	int m;

	if (!log_state.sink &&
	    (level > log_state.level || (level > log_state.stderr_level && log_state.fd < 0)))
		return;
	va_start(ap, fmt);
	m = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	if (log_state.sink)
		log_state.sink(log_state.sink_ctx, level, file, line, msg);
	else
		write_line(level, msg);
}
