/* Logging to stderr and a log file, or to a program's own sink; stdout stays the protocol channel */
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
 * log_sink_fn - where a program with a log format of its own sends every line
 * @ctx: what log_set_sink() was given
 * @level: the line's level
 * @file: the source file of the call (__FILE__)
 * @line: its line
 * @msg: the message as formatted, not escaped: the sink escapes it for its format
 */
typedef void log_sink_fn(void *ctx, enum log_level level, const char *file, int line,
			 const char *msg);

/**
 * log_set_sink() - send every line to a sink instead of stderr and the log file
 * @fn: the sink; NULL for stderr and the log file, as log_setup() says (a plugin's)
 * @ctx: its first argument
 *
 * A daemon writes one log in one format (klog text or JSON): the lines of the code it
 * shares with the plugins (the store's) must come out in it, not as a plugin's. The
 * sink gets every level: log_setup()'s thresholds are the default writer's. Called
 * before any thread starts; lines may then come from several threads at once.
 */
void log_set_sink(log_sink_fn *fn, void *ctx);

/**
 * log_msg() - write one line at a level
 * @level: level
 * @file: the caller's source file (the macros below give it)
 * @line: its line
 * @fmt: message
 *
 * Without a sink the message is escaped (common/util/text.h) before it is written: a
 * value from a network config can neither start a line of its own nor carry terminal
 * controls or invalid UTF-8 into the log. A sink escapes it for its own format.
 */
void log_msg(enum log_level level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __FILE__, __LINE__, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LEVEL_WARNING, __FILE__, __LINE__, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __FILE__, __LINE__, __VA_ARGS__)
