/* Logging to stderr and an optional log file; stdout stays the protocol channel */
#pragma once

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARNING,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

/**
 * log_setup() - set the program name, thresholds and optional log file
 * @prog: prefix for every line
 * @level: lines above this level are dropped
 * @stderr_level: lines above this level go to the log file only: a CNI plugin's stderr
 *                carries warnings and errors (a runtime shows it beside a failure),
 *                its info and debug lines go only where logFile says
 * @fd: an open log file to append every line (up to @level) to (ownership passes
 *      here), -1 for none
 */
void log_setup(const char *prog, enum log_level level, enum log_level stderr_level, int fd);

/**
 * log_level_parse() - parse "error", "warning", "info", "debug" (and "verbose")
 * @s: text
 * @ret: level, written only on success
 *
 * Return: 0 on success, -EINVAL for an unknown level.
 */
int log_level_parse(const char *s, enum log_level *ret);

/**
 * log_msg() - write one line at a level
 * @level: level
 * @fmt: message
 *
 * The message is escaped (common/util/text.h) before it is written: a value
 * from a network config can neither start a line of its own nor carry
 * terminal controls or invalid UTF-8 into the log.
 */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
