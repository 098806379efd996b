/* The keys a plugin reads, and a warning for a config member that is a near miss of one */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_object;

/*
 * One object of a config and the keys a plugin reads from it. A plugin lists its
 * tables in struct cni_plugin; the top level's list leaves out what every config has
 * (cniVersion, name, type, ipam, dns, prevResult, runtimeConfig, args, capabilities,
 * logFile, logLevel, the GC attachments), which cni_conf_keys_warn() adds.
 */
struct cni_conf_keys {
	const char *object;      /* NULL for the top level, or a dotted path: "ipam", "args.cni" */
	const char *const *keys; /* NULL-terminated */
};

/**
 * cni_conf_key_near() - the known key a member's name is a misspelling of
 * @name: the member's name
 * @keys: the keys read from its object, NULL-terminated
 * @common: also the keys every config has (the top level)
 *
 * A known key matches in any case, as Go's decoder matches it. The edits allowed
 * (text_distance()) are two, one for a key of four letters or fewer: "mtu" and "mac"
 * are two apart.
 *
 * Return: NULL when @name is a known key or is further from every one; else the
 * nearest known key (the first listed of equally near ones).
 */
const char *cni_conf_key_near(const char *name, const char *const *keys, bool common);

/**
 * cni_conf_keys_warn() - a warning for each member that is no key the plugin reads
 *                        but a near miss of one
 * @root: the config (or a node file's) object
 * @tables: the plugin's tables, ended by one whose @keys is NULL; NULL for none
 * @source: what the members are named in, for the message: "config", or a file's path
 *
 * A misspelt key is ignored, as the reference plugins ignore every unknown key: the
 * warning (log_warning(): stderr, and logFile once it is open) says which key it
 * probably meant. Other unknown keys are left alone: a config may carry keys for
 * other plugins.
 *
 * Return: the number of warnings.
 */
size_t cni_conf_keys_warn(struct json_object *root, const struct cni_conf_keys *tables,
			  const char *source);
