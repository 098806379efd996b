/* sbr: the rules an ADD made in a pod, kept on the node until its DEL */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/record/record.h"
#include "common/util/ipaddr.h"

/*
 * One record per attachment, "<container ID>:<ifname>". DEL finds a rule by its
 * address on the link; an address of prevResult that the link never had (or no longer
 * has) is found only here.
 */
#define SBR_STATE_DIR RECORD_ROOT "/sbr"
/* A rule's line is at most 64 bytes: a network config of 4 MiB holds fewer addresses. */
#define SBR_STATE_MAX_BYTES (8u << 20)

/* A rule "from <src> lookup <table>" of an ADD. */
struct sbr_state_rule {
	struct ip_addr src;
	uint32_t table;
	bool filled; /* the ADD filled the table with the link's routes (no "table" in the config) */
};

/**
 * sbr_state_name() - the record name of an attachment
 * @container_id: CNI_CONTAINERID
 * @ifname: CNI_IFNAME
 * @buf: output
 * @size: its size
 *
 * Return: 0 on success, -EINVAL for an ID or a name that could not be one, -ENAMETOOLONG.
 */
int sbr_state_name(const char *container_id, const char *ifname, char *buf, size_t size);

/**
 * sbr_state_save() - keep the rules of an attachment, replacing what was kept
 * @name: sbr_state_name()
 * @v: the rules
 * @n: how many
 *
 * Return: 0 on success, negative errno on failure (the old record then stays).
 */
int sbr_state_save(const char *name, const struct sbr_state_rule *v, size_t n);

/**
 * sbr_state_load() - the rules kept for an attachment
 * @name: sbr_state_name()
 * @ret: malloc'ed array, written only on success
 * @ret_n: how many
 *
 * Return: 0 on success, -ENOENT when none is kept, -EBADMSG for a file that is not one
 * this plugin wrote, negative errno otherwise.
 */
int sbr_state_load(const char *name, struct sbr_state_rule **ret, size_t *ret_n);

/**
 * sbr_state_remove() - forget an attachment's rules (and what killed saves of its container
 *                      left)
 * @name: sbr_state_name()
 *
 * Return: 0 when removed or when there was none, negative errno otherwise.
 */
int sbr_state_remove(const char *name);

/**
 * sbr_state_format() - a record's body
 * @v: the rules
 * @n: how many
 * @ret: malloc'ed, NUL-terminated text, written only on success
 *
 * Return: 0 on success, -ENOMEM.
 */
int sbr_state_format(const struct sbr_state_rule *v, size_t n, char **ret);

/**
 * sbr_state_parse() - the rules of a record's body
 * @text: the body, NUL-terminated (changed in place)
 * @ret: malloc'ed array, written only on success
 * @ret_n: how many
 *
 * Return: 0 on success, -EBADMSG for anything sbr_state_format() would not write, -ENOMEM.
 */
int sbr_state_parse(char *text, struct sbr_state_rule **ret, size_t *ret_n);
