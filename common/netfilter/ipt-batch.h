/* iptables change sets: a table read once, its changes applied by one iptables-restore */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/netfilter/iptables.h"

struct cni_err;

/*
 * Upstream's plugins run one iptables command per question and per change
 * (go-iptables: "-S CHAIN 1", "-C", "-N", "-A", "-I", 20 to 40 processes for one
 * portmap ADD). A batch asks once: the table as "-S" prints it, which answers
 * whether a chain exists and, for a rule the caller knows the printed form of,
 * whether it is there; a rule whose form is not known (or not found: the printed
 * form differs between iptables versions) is asked with "-C" as upstream does.
 * The changes, each the command upstream would run, go to iptables-restore
 * together: the rules are upstream's, rule for rule and in order, so that a node
 * moved between the reference and ours with pods live finds its own.
 */
struct ipt_batch;

/* How often ipt_batch_apply() reads the table again after a refused restore. */
#define IPT_BATCH_ATTEMPTS 3

/**
 * ipt_batch_open() - read a table ("-S") and start a change set on it
 * @f: iptables or ip6tables
 * @table: the table ("nat", "filter")
 * @ret: the batch, written only on success; release with ipt_batch_free()
 * @err: as ipt_run()
 *
 * Return: 0 on success, -ENOEXEC when the binary cannot be run, negative errno otherwise.
 */
int ipt_batch_open(enum ipt_family f, const char *table, struct ipt_batch **ret,
		   struct cni_err *err);

/**
 * ipt_batch_free() - release a batch (committed or not)
 * @b: batch, may be NULL
 */
void ipt_batch_free(struct ipt_batch *b);

/**
 * ipt_batch_has_chain() - whether the table has a chain (as read, or made by this batch)
 * @b: batch
 * @chain: chain
 *
 * Return: true when it has.
 */
bool ipt_batch_has_chain(const struct ipt_batch *b, const char *chain);

/**
 * ipt_batch_ensure_chain() - "-N CHAIN" unless the table has it
 * @b: batch
 * @chain: chain
 *
 * Return: 0 on success, -EINVAL for a name iptables would refuse, -ENOMEM.
 */
int ipt_batch_ensure_chain(struct ipt_batch *b, const char *chain);

/**
 * ipt_batch_rule_exists() - whether a chain holds a rule, as read ("-C" when not found)
 * @b: batch
 * @chain: chain
 * @rule: the rule's arguments
 * @n: their number
 * @printed: the rule as "-S" prints it, after "-A CHAIN ", NULL when not known
 * @err: as ipt_run()
 *
 * Return: 1 when it does, 0 when not (or no such chain), negative errno otherwise.
 */
int ipt_batch_rule_exists(struct ipt_batch *b, const char *chain, const char *const *rule,
			  size_t n, const char *printed, struct cni_err *err);

/**
 * ipt_batch_ensure_rule() - add a rule unless its chain holds it (upstream's InsertUnique)
 * @b: batch
 * @chain: chain
 * @first: "-I CHAIN 1", else "-A CHAIN"
 * @rule: the rule's arguments, as upstream passes them to iptables
 * @n: their number
 * @printed: the rule as "-S" prints it, after "-A CHAIN ", when the caller knows it; NULL
 * @err: as ipt_run(), for the "-C" asked when @printed is not found
 *
 * A chain this batch makes holds nothing yet: no question is asked.
 *
 * Return: 1 when added, 0 when there already, negative errno on failure.
 */
int ipt_batch_ensure_rule(struct ipt_batch *b, const char *chain, bool first,
			  const char *const *rule, size_t n, const char *printed,
			  struct cni_err *err);

/**
 * ipt_batch_add_rule() - add a rule without asking ("-A CHAIN" or "-I CHAIN 1")
 * @b: batch
 * @chain: chain
 * @first: insert at the top
 * @rule: the rule's arguments
 * @n: their number
 *
 * Return: 0 on success, -EINVAL for an argument a restore line cannot carry (a control
 * character), -ENOMEM.
 */
int ipt_batch_add_rule(struct ipt_batch *b, const char *chain, bool first,
		       const char *const *rule, size_t n);

/**
 * ipt_batch_delete_rule() - delete a rule when its chain holds it (upstream runs "-D" and
 *                           ignores a failure)
 * @b: batch
 * @chain: chain
 * @rule: the rule's arguments
 * @n: their number
 * @printed: the rule as "-S" prints it, NULL when not known
 * @err: as ipt_run(), for the "-C" asked when @printed is not found
 *
 * Return: 1 when the batch deletes it, 0 when it is not there, negative errno on failure.
 */
int ipt_batch_delete_rule(struct ipt_batch *b, const char *chain, const char *const *rule,
			  size_t n, const char *printed, struct cni_err *err);

/**
 * ipt_batch_delete_printed() - delete a rule as "-S" printed it ("-A CHAIN ..." becomes "-D")
 * @b: batch
 * @line: the line, without its newline
 *
 * Return: 0 on success, -EINVAL for a line that is not a rule, -ENOMEM.
 */
int ipt_batch_delete_printed(struct ipt_batch *b, const char *line);

/**
 * ipt_batch_delete_chain() - flush and delete a chain ("-F", "-X") when the table has it
 * @b: batch
 * @chain: chain (no rule may still jump to it when the batch is committed)
 *
 * Return: 1 when the chain is deleted by the batch, 0 when the table has none, -ENOMEM.
 */
int ipt_batch_delete_chain(struct ipt_batch *b, const char *chain);

/**
 * ipt_batch_rules() - the rules of a chain as read, in order
 * @b: batch
 * @chain: chain
 * @cb: called with each "-A CHAIN ..." line (NUL-terminated, no newline); a negative
 *      return stops the walk and is returned
 * @data: for @cb
 *
 * Return: 0, or what @cb returned.
 */
int ipt_batch_rules(const struct ipt_batch *b, const char *chain,
		    int (*cb)(const char *line, void *data), void *data);

/**
 * ipt_batch_changes() - how many changes the batch holds
 * @b: batch
 *
 * Return: their number.
 */
size_t ipt_batch_changes(const struct ipt_batch *b);

/**
 * ipt_batch_commit() - apply the changes with one iptables-restore (ipt_restore())
 * @b: batch (one without changes runs nothing)
 * @err: as ipt_restore()
 *
 * Return: 0 on success, negative errno on failure (nothing changed).
 */
int ipt_batch_commit(struct ipt_batch *b, struct cni_err *err);

/**
 * ipt_chain_name_valid() - whether iptables takes a name for a chain of its own
 * @name: the name
 *
 * Return: true for 1 to 28 printable bytes without blanks or quotes, not starting with
 * '-' or '!'.
 */
bool ipt_chain_name_valid(const char *name);

/**
 * ipt_batch_apply() - read a table, build a change set, commit it; again when refused
 * @f: iptables or ip6tables
 * @table: the table
 * @build: adds the changes to the batch (it may ask, and is asked again after a retry)
 * @data: for @build
 * @err: what the last attempt failed on
 *
 * A restore that fails (another process made a chain this one makes, between the read
 * and the write) is retried from the read, IPT_BATCH_ATTEMPTS times in all; a failure of
 * @build or of the read ends it at once.
 *
 * Return: 0 on success, negative errno on failure (nothing changed by this call).
 */
int ipt_batch_apply(enum ipt_family f, const char *table,
		    int (*build)(struct ipt_batch *b, void *data, struct cni_err *err), void *data,
		    struct cni_err *err);
