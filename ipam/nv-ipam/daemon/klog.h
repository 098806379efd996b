/* ipam-node's and ipam-controller's log lines in the Kubernetes components' formats: klog text or JSON */
#pragma once

#include <stdbool.h>

#include "common/util/log.h"

enum klog_format {
	KLOG_TEXT, /* I1125 19:08:13.123456   42 pools.c:88] "message" key="value" (stderr) */
	KLOG_JSON, /* {"ts":<ms>,"caller":"pools.c:88","msg":"message","v":0,"key":"value"} (stdout) */
};

enum klog_severity { KLOG_INFO, KLOG_WARNING, KLOG_ERROR };

/* The verbosity of the util logger's debug lines: the Kubernetes components' debug level. */
#define KLOG_V_DEBUG 4

/**
 * klog_setup() - the format, the verbosity and where lines go
 * @format: text or JSON
 * @verbosity: --v: info lines of a higher level are dropped
 * @fd: where lines go; -1: stderr for text, stdout for JSON (as the reference's components)
 */
void klog_setup(enum klog_format format, int verbosity, int fd);

/**
 * klog_enabled() - whether info lines of a level are written
 * @v: level
 *
 * Return: true when they are.
 */
bool klog_enabled(int v);

/**
 * klog_emit() - one line, written whole (lines of several threads never mix)
 * @sev: severity
 * @v: info level (ignored for warnings and errors)
 * @file: source file (its name is the caller)
 * @line: source line
 * @err: an error's text (the "err" key), NULL for none
 * @msg: the message
 * @...: key, value pairs (strings), ended by NULL
 *
 * Every string is escaped for its format: a value from the API cannot end a line or forge
 * a key; bytes that are not UTF-8 are shown as \xNN.
 */
void klog_emit(enum klog_severity sev, int v, const char *file, int line, const char *err,
	       const char *msg, ...) __attribute__((sentinel));

/**
 * klog_sink() - the util logger's lines (the store's) as klog lines: the log_sink_fn of
 *               both daemons
 * @ctx: unused
 * @level: an error, a warning, info at level 0, debug at KLOG_V_DEBUG
 * @file: the caller's source file
 * @line: its line
 * @msg: the message
 */
void klog_sink(void *ctx, enum log_level level, const char *file, int line, const char *msg);

#define klog_info(v, ...) klog_emit(KLOG_INFO, v, __FILE__, __LINE__, NULL, __VA_ARGS__)
#define klog_warning(...) klog_emit(KLOG_WARNING, 0, __FILE__, __LINE__, NULL, __VA_ARGS__)
#define klog_error(err, ...) klog_emit(KLOG_ERROR, 0, __FILE__, __LINE__, err, __VA_ARGS__)
