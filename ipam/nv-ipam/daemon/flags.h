/* The daemons' command line: pflag's spelling over a table of {name, kind, offset, default, help} */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum daemon_flag_kind {
	DF_STR,
	DF_INT,
	DF_BOOL,
	DF_DURATION,
	DF_IGNORED,      /* takes a value, means nothing here */
	DF_IGNORED_BOOL, /* takes none */
};

struct daemon_flag {
	const char *name;
	enum daemon_flag_kind kind;
	size_t off;       /* in the program's flags struct */
	const char *def;  /* the default, as --help shows it */
	const char *help;
};

/*
 * The offset of @field in the flags struct @type, refused at build time unless the field
 * is of @ctype, what its kind stores: const char * (DF_STR), long (DF_INT, DF_DURATION),
 * bool (DF_BOOL). The parser writes a field by its offset alone.
 */
#define DAEMON_FIELD(type, field, ctype)                                                       \
	(offsetof(type, field) +                                                               \
	 0 * sizeof(char[1 - 2 * !__builtin_types_compatible_p(__typeof__(((type *)0)->field), \
								  ctype)]))

/* One program's table and where its flags struct keeps --help, --version and the flags it ignores. */
struct daemon_cmdline {
	const char *prog;                 /* names the program in errors */
	const struct daemon_flag *flags;
	size_t n_flags;
	int name_width;                   /* of the flag column in --help */
	size_t ignored_off;               /* const char *[max_ignored] */
	size_t n_ignored_off;             /* int */
	int max_ignored;
	size_t help_off, version_off;     /* bool */
	/* the program's own checks of the values, after the parse; -EINVAL after telling */
	int (*check)(const void *flags, FILE *err);
	const char *usage_head, *usage_tail; /* the --help text around the flag list */
};

/**
 * daemon_flags_parse() - read a command line into a flags struct
 * @c: the program's table
 * @argc: argument count
 * @argv: arguments
 * @flags: the program's flags struct, zeroed: set to the table's defaults, then to the
 *         command line (written over even when the command line is refused)
 * @err: where a usage error is told ("unknown flag: --x", "invalid argument ... for --v")
 *
 * Flags are spelled --name=value or --name value (pflag's way; -v too, -h for --help);
 * booleans take --name, --name=true or --name=false; durations Go's ("15s", "1m30s").
 * An unknown flag or a positional argument is an error, and so is what @c->check refuses;
 * --help and --version are then answered on stdout.
 *
 * Return: 1 to go on, 0 after --help or --version (exit 0), -EINVAL after writing the
 * error and the pointer to --help to @err.
 */
/* The members of struct daemon_cmdline that follow from the flags struct @type (its help,
 * version, ignored[] and n_ignored) and the table @table. */
#define DAEMON_CMDLINE_OF(type, table)                                                      \
	.flags = (table), .n_flags = sizeof(table) / sizeof((table)[0]),                    \
	.ignored_off = offsetof(type, ignored), .n_ignored_off = offsetof(type, n_ignored), \
	.max_ignored = (int)(sizeof(((type *)0)->ignored) / sizeof(((type *)0)->ignored[0])), \
	.help_off = offsetof(type, help), .version_off = offsetof(type, version)

/* The Kubernetes components' logging flags, in the table of the flags struct @type. */
#define DAEMON_LOG_FLAGS(type)                                                                  \
	{ "v", DF_INT, DAEMON_FIELD(type, v, long), "0", "log verbosity (-v too)" },                      \
	{ "logging-format", DF_STR, DAEMON_FIELD(type, logging_format, const char *), "text",                    \
	  "log format: text (klog, on stderr) or json (on stdout)" },                          \
	{ "vmodule", DF_IGNORED, 0, NULL, "taken and ignored" },                                \
	{ "log-flush-frequency", DF_IGNORED, 0, NULL,                                           \
	  "taken and ignored (every line is written at once)" },                               \
	{ "log-json-info-buffer-size", DF_IGNORED, 0, NULL, "taken and ignored" }

/* --version and --help, last in the table of the flags struct @type. */
#define DAEMON_INFO_FLAGS(type)                                                                 \
	{ "version", DF_BOOL, DAEMON_FIELD(type, version, bool), "false", "print the version and exit" }, \
	{ "help", DF_BOOL, DAEMON_FIELD(type, help, bool), "false", "this text" }

int daemon_flags_parse(const struct daemon_cmdline *c, int argc, const char *const *argv,
		       void *flags, FILE *err);
