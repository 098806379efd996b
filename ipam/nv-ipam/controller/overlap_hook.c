/*
 * The webhook's look at the other pools: an overlap warned about, or refused with --reject-overlapping-pools
 *
 * Overlap can be meant (isolated rails reusing a subnet), so by default the review is
 * allowed with a warning per other pool, which kubectl prints as "Warning: ...". The
 * pools come from the controller's mirror: a pool created a moment ago may not be there
 * yet, which the controller's OverlappingPools Event then catches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/json.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/controller/overlap_hook.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/overlap.h"

static int add(struct json_object *array, const char *s)
{
	struct json_object *v = json_object_new_string(s);

	if (!v || json_object_array_add(array, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int overlap_hook_check(struct json_object *obj, const struct admission_pools *pools,
		       struct json_object **ret_warnings, char **ret_denial)
{
	_cleanup_(json_object_putp) struct json_object *warnings = NULL;
	const char *ns = json_object_get_string(k8s_object_member(obj, "metadata", "namespace"));
	struct overlap_item self, other;
	struct text_buf denial = { 0 };
	size_t found = 0;
	char line[OVERLAP_DESCRIBE_SIZE];

	*ret_warnings = NULL;
	*ret_denial = NULL;
	if (!pools || (pools->ns && ns && *ns && strcmp(ns, pools->ns) != 0) ||
	    overlap_item_from_pool(obj, &self) < 0)
		return 0;
	for (size_t i = 0; i < pools->n; i++) {
		if (overlap_item_from_pool(pools->objs[i], &other) < 0 ||
		    (strcmp(other.kind, self.kind) == 0 && strcmp(other.name, self.name) == 0) ||
		    !overlap_meet(&self, &other))
			continue;
		if (++found > OVERLAP_HOOK_NAMED)
			continue;
		overlap_describe(&self, &other, line, sizeof(line));
		if (pools->reject) {
			if (denial.len)
				text_buf_puts(&denial, "; ");
			text_buf_puts(&denial, line);
			continue;
		}
		if (!warnings && !(warnings = json_object_new_array()))
			return -ENOMEM;
		if (add(warnings, line) < 0)
			return -ENOMEM;
	}
	if (!found)
		return 0;
	if (found > OVERLAP_HOOK_NAMED) {
		char q[K8S_QUOTE_SIZE];

		snprintf(line, sizeof(line), "%s \"%s\" overlaps %zu more pools", self.kind,
			 k8s_quote(self.name, q, sizeof(q)), found - OVERLAP_HOOK_NAMED);
		if (pools->reject) {
			text_buf_puts(&denial, "; ");
			text_buf_puts(&denial, line);
		} else if (add(warnings, line) < 0) {
			return -ENOMEM;
		}
	}
	if (pools->reject) {
		text_buf_puts(&denial, " (--reject-overlapping-pools)");
		text_buf_putc(&denial, '\0');
		if (denial.oom) {
			text_buf_free(&denial);
			return -ENOMEM;
		}
		*ret_denial = denial.data;
		return 0;
	}
	*ret_warnings = TAKE_PTR(warnings);
	return 0;
}
