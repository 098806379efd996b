/* iptables: the host's own iptables and ip6tables, run as upstream's plugins run them */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cni_err;

/*
 * Upstream (go-iptables) runs the host's binary, "iptables -t TABLE -OP CHAIN
 * SPEC... --wait", once per change. So do we: the binary is the only one that
 * knows which backend the host uses (legacy xtables or nf_tables), and rules
 * written by another backend than the host's are invisible to its tools and
 * to kube-proxy. Its argument order, its --wait (taking the xtables lock) and
 * its exit codes are what the plugins' CHECK and DEL must read.
 */
enum ipt_family {
	IPT_IPV4, /* iptables */
	IPT_IPV6, /* ip6tables */
};

/* The longest input of ipt_restore(): what a pipe holds before its reader starts. */
#define IPT_RESTORE_MAX 4096u

/* The longest output read from a listing; a node's nat table fits many times. */
#define IPT_OUTPUT_MAX (64u << 20)

/**
 * ipt_argv() - the command line of one iptables operation, as upstream builds it
 * @f: iptables or ip6tables
 * @table: "-t" table
 * @op: "-A", "-I", "-D", "-C", "-N", "-F", "-X", "-S"
 * @chain: the chain, NULL for an operation on the table ("-S" of all)
 * @extra: what follows the chain: the rule, or a position then the rule, may be NULL
 * @n: number of @extra
 * @ret: malloc'ed NULL-terminated array of the binary's name and its arguments, ending
 *       with "--wait" (the strings are @table's, @extra's and constants: not owned)
 *
 * Return: 0 on success, -ENOMEM.
 */
int ipt_argv(enum ipt_family f, const char *table, const char *op, const char *chain,
	     const char *const *extra, size_t n, const char ***ret);

/**
 * ipt_run() - run an iptables command line, its output read
 * @argv: from ipt_argv()
 * @ret_out: malloc'ed stdout (NUL-terminated), NULL to ignore it
 * @err: code 100 with the command and what it printed, except for a missing chain or
 *       rule (left untouched)
 *
 * The binary is looked up in PATH (the runtime's), then in the usual sbin and bin
 * directories when PATH has none.
 *
 * Return: 0 when it exits 0, -ENOENT when it says there is no such chain or rule
 * (go-iptables' IsNotExist()), -ENOEXEC when no binary can be run, -EIO for any other
 * failure.
 */
int ipt_run(const char *const *argv, char **ret_out, struct cni_err *err);

/**
 * ipt_chain_exists() - whether a table has a chain ("-S CHAIN 1" succeeds)
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain
 * @err: as ipt_run()
 *
 * Return: 1 when it does, 0 when not, negative errno when it cannot be told.
 */
int ipt_chain_exists(enum ipt_family f, const char *table, const char *chain, struct cni_err *err);

/**
 * ipt_chain_ensure() - create a chain unless it exists ("-N", an existing one kept as is)
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain
 * @err: as ipt_run()
 *
 * Return: 0 on success, negative errno on failure.
 */
int ipt_chain_ensure(enum ipt_family f, const char *table, const char *chain, struct cni_err *err);

/**
 * ipt_chain_clear() - an empty chain: created when missing, flushed ("-F") otherwise
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain
 * @err: as ipt_run()
 *
 * Return: 0 on success, negative errno on failure.
 */
int ipt_chain_clear(enum ipt_family f, const char *table, const char *chain, struct cni_err *err);

/**
 * ipt_chain_delete() - flush and delete a chain ("-F", "-X"); a missing one is no error
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain (no rule may still jump to it)
 * @err: as ipt_run()
 *
 * Return: 0 on success, negative errno on failure.
 */
int ipt_chain_delete(enum ipt_family f, const char *table, const char *chain, struct cni_err *err);

/**
 * ipt_rule_exists() - whether a chain holds a rule ("-C")
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain
 * @rule: the rule's arguments
 * @n: their number
 * @err: as ipt_run()
 *
 * Return: 1 when it does, 0 when not (or no such chain), negative errno otherwise.
 */
int ipt_rule_exists(enum ipt_family f, const char *table, const char *chain,
		    const char *const *rule, size_t n, struct cni_err *err);

/**
 * ipt_rule_ensure() - add a rule unless the chain holds it: first ("-I CHAIN 1") or last ("-A")
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain
 * @first: insert at the top, else append
 * @rule: the rule's arguments
 * @n: their number
 * @err: as ipt_run()
 *
 * Return: 0 on success, negative errno on failure.
 */
int ipt_rule_ensure(enum ipt_family f, const char *table, const char *chain, bool first,
		    const char *const *rule, size_t n, struct cni_err *err);

/**
 * ipt_rule_delete() - delete a rule ("-D"); a missing rule or chain, or exit status 2 (a
 *                     target that does not exist), is no error, as upstream's DeleteRule()
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain
 * @rule: the rule's arguments
 * @n: their number
 * @err: as ipt_run()
 *
 * Return: 0 on success, negative errno on failure.
 */
int ipt_rule_delete(enum ipt_family f, const char *table, const char *chain,
		    const char *const *rule, size_t n, struct cni_err *err);

/**
 * ipt_list() - a chain's rules (or a table's chains and rules) as "-S" prints them
 * @f: iptables or ip6tables
 * @table: table
 * @chain: chain, NULL for the whole table
 * @ret_out: malloc'ed text, one "-P"/"-N"/"-A" line each, written only on success
 * @err: as ipt_run()
 *
 * Return: 0 on success, -ENOENT for no such chain, negative errno otherwise.
 */
int ipt_list(enum ipt_family f, const char *table, const char *chain, char **ret_out,
	     struct cni_err *err);

/**
 * ipt_restore() - changes to tables the host already has, applied together or not at all
 * @f: iptables or ip6tables
 * @text: iptables-restore's input: "*TABLE", ":CHAIN - [0:0]" for a new chain, "-A"
 *        and "-D" lines, "-F" and "-X" of a chain, "COMMIT"; at most IPT_RESTORE_MAX bytes
 * @err: code 100 with the command and what it printed
 *
 * "iptables-restore --noflush --wait": one run for what upstream runs a command
 * each for, with the same result. A chain declared with ":" is flushed when it
 * exists: declare only chains a listing showed missing.
 *
 * Return: 0 on success, -ENOEXEC when no binary can be run, -EIO when it refused
 * the changes (none made).
 */
int ipt_restore(enum ipt_family f, const char *text, struct cni_err *err);
