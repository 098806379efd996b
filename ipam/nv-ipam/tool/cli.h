/* Command-line plumbing shared by the nv-ipam-tool subcommands */
#pragma once

#include <getopt.h>
#include <stdbool.h>

#include "common/util/log.h"
#include "ipam/nv-ipam/plugin/config.h"

struct cni_err;
struct nvipam_store;

/* A macro's value as a string literal, for --help texts. */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

/* Exit statuses: 0 success, 1 failure (or problems found), 2 bad usage. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/**
 * cli_fail() - print a failure on stderr
 * @err: the failure; one refused for want of privileges, met by a user who is not root,
 *       says that the node's files are root's
 *
 * Return: CLI_EXIT_FAIL.
 */
int cli_fail(const struct cni_err *err);

/**
 * cli_log_sink() - the util logger's lines (the store's) in the tool's own words on stderr,
 *                  "nv-ipam-tool: warning: ...": the log_sink_fn of nv-ipam-tool
 * @ctx: unused
 * @level: error, warning and info are written; debug is dropped
 * @file: unused
 * @line: unused
 * @msg: the message (escaped here)
 */
void cli_log_sink(void *ctx, enum log_level level, const char *file, int line, const char *msg);

/**
 * cli_usage_error() - print a usage error and a pointer to --help on stderr
 * @cmd: subcommand
 * @fmt: message
 *
 * Return: CLI_EXIT_USAGE.
 */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * cli_parse_uint() - a decimal number option
 * @s: text
 * @max: highest accepted value
 * @ret: value, written only on success
 *
 * Return: 0 on success, -EINVAL.
 */
int cli_parse_uint(const char *s, unsigned long max, unsigned long *ret);

/**
 * cli_parse_listed_at() - a --listed-at option: when a pod listing was started, in seconds
 *                         since the epoch as date +%s prints them (up to 9999-12-31)
 * @cmd: subcommand, for the message
 * @arg: text
 * @ret: value, written only on success
 *
 * Return: 0, or CLI_EXIT_USAGE after printing why.
 */
int cli_parse_listed_at(const char *cmd, const char *arg, unsigned long *ret);

/* Where the node's files are, shared by show, release, check and gc. */
struct cli_node_files {
	const char *store;
	const char *pool_file;
	unsigned long lock_timeout_ms;
	bool pool_file_given; /* --pool-file named it: a missing one is then an error */
};

#define CLI_NODE_FILES_INIT                                                                        \
	{ NVIPAM_DEFAULT_STORE_FILE, NVIPAM_DEFAULT_POOL_FILE, NVIPAM_DEFAULT_LOCK_TIMEOUT_MS, false }

/*
 * Their long options, to put first in a subcommand's option table: the store's for
 * every subcommand, the pool file's only for those that read it (release does not).
 */
#define CLI_STORE_OPTIONS                                                                          \
	{ "store", required_argument, NULL, 's' },                                                \
	{ "lock-timeout-ms", required_argument, NULL, 't' }
#define CLI_NODE_FILE_OPTIONS CLI_STORE_OPTIONS, { "pool-file", required_argument, NULL, 'f' }

/**
 * cli_options() - parse a subcommand's options
 * @cmd: subcommand name, for messages
 * @help: text printed on stdout for -h/--help
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 * @opts: long options, ending with a zeroed entry; 'h' is --help
 * @handle: called for every other option with its value; returns 0, or an exit status
 *          after printing why (cli_usage_error())
 * @ctx: passed to @handle
 * @files: filled from CLI_NODE_FILE_OPTIONS ('s', 'f', 't'); NULL when not used
 *
 * Positional arguments are refused.
 *
 * Return: systemd's convention: 1 to go on, 0 after --help (exit 0), or minus the exit status
 * after printing why (a usage error: -CLI_EXIT_USAGE).
 */
int cli_options(const char *cmd, const char *help, int argc, char **argv,
		const struct option *opts, int (*handle)(int opt, const char *arg, void *ctx),
		void *ctx, struct cli_node_files *files);

/**
 * cli_store_open() - open the store for the tool, creating nothing: a store that does
 *                    not exist is none
 * @files: where the store is and how long to wait for its lock
 * @read_only: for a command that writes nothing (nvipam_store_open_read()); otherwise
 *             nvipam_store_open_inspect()
 * @ret: the store, written only on success (NULL for none, which holds nothing); release
 *       with nvipam_store_close()
 * @err: as nvipam_store_open()
 *
 * Return: 0 on success, negative errno on failure.
 */
int cli_store_open(const struct cli_node_files *files, bool read_only, struct nvipam_store **ret,
		   struct cni_err *err);

/**
 * cli_store_exists() - whether there is a store at a path: its file or its pool directory
 * @store: store file
 * @ret: false only when neither is there (written on success)
 * @err: 999 for out of memory
 *
 * Looks without creating anything.
 *
 * Return: 0 on success, -ENOMEM.
 */
int cli_store_exists(const char *store, bool *ret, struct cni_err *err);
