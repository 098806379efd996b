/* A pool's JSON text cut down to one node's share of its status before it is parsed */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/**
 * carve_status_skim() - drop from a pool's text the status entries a node cannot need
 * @text: an IPPool or CIDRPool object, or a watch event carrying one in "object"
 * @len: its length
 * @node: the node
 * @cidrpool: whether it is a CIDRPool
 * @ret: the cut text (malloc'd), written only when something was dropped
 * @ret_len: its length
 *
 * A pool's status.allocations holds an entry per node of the cluster; parsed whole it is
 * a tree of megabytes for the one entry a node reads. This reads the text without
 * building one and leaves out, from every status.allocations array, the entries that
 * carve_pool_trim() would drop anyway: every entry that cannot name @node (no escape, no
 * byte past ASCII, no @node in its text), and for a CIDRPool not one whose prefix or
 * gateway parses equal to those of the node's first entry. What it keeps is a superset
 * of what carve_pool_trim() keeps, in the same order, so that the node pool file
 * rendered from the cut text is the one rendered from the whole. Text it does not read
 * as JSON is left whole, for the parser to refuse.
 *
 * Return: 1 when @ret holds a cut text, 0 when nothing was dropped, -ENOMEM.
 */
int carve_status_skim(const char *text, size_t len, const char *node, bool cidrpool, char **ret,
		      size_t *ret_len);
