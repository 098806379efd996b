/* The daemons' command line: pflag's spelling over a table of {name, kind, offset, default, help} */
#pragma once

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

/* One program's table and where its flags struct keeps the flags it ignores. */
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
	void (*usage)(FILE *out);         /* the --help text */
};

/**
 * daemon_flags_parse() - read a command line into a flags struct
 * @c: the program's table
 * @argc: argument count
 * @argv: arguments
 * @flags: the program's flags struct, holding the defaults on entry
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
int daemon_flags_parse(const struct daemon_cmdline *c, int argc, const char *const *argv,
		       void *flags, FILE *err);

/**
 * daemon_flags_usage() - the flag list of the --help text
 * @c: the program's table
 * @out: where to write it
 */
void daemon_flags_usage(const struct daemon_cmdline *c, FILE *out);
