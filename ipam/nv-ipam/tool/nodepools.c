/*
 * The node-pools subcommand: this node's pool file from the pools' status (nodefile.c),
 * rewritten (atomically) only when its bytes change, each change reported
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json-exact.h"
#include "ipam/nv-ipam/carve/nodefile.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/tool/nodepools.h"

#define POOL_FILE_MAX_BYTES (64u << 20)

static const char nodepools_help[] =
	"Usage: nv-ipam-tool node-pools --node NAME [--input FILE] [--output FILE] [--allow-empty]\n"
	"\n"
	"NAME's node pool file from IPPool/CIDRPool objects with the status the nv-ipam\n"
	"controller wrote (kubectl get ippools,cidrpools -o json), printed on stdout. Nothing\n"
	"is written unless --output names a file: it is then replaced atomically, only when\n"
	"its contents change, in a directory that must exist; each added, removed or changed\n"
	"pool is reported on stdout, or \"unchanged\". A node's own file is\n"
	"  " NVIPAM_DEFAULT_POOL_FILE "\n"
	"which ipam-node keeps up to date: name it only on a node without ipam-node.\n"
	"\n"
	"  --node NAME     the node (default: $NODE_NAME)\n"
	"  --input FILE    pool objects ('-', the default, reads stdin)\n"
	"  --output FILE   write the node pool file FILE instead of printing it\n"
	"  --stdout        print it (the default)\n"
	"  --allow-empty   print (or write) a file of no pool when no pool gives NAME\n"
	"                  a block; without it that is an error (a mistyped node name\n"
	"                  would otherwise empty the node's file)\n"
	"  -h, --help      this text\n";

/* Each pool left out, on stderr. */
static void print_notes(const char *text)
{
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");

		fprintf(stderr, "nv-ipam-tool: %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* How many pools a rendered node pool file holds. */
static size_t nodepools_count(const char *text)
{
	struct json_object *root = json_tokener_parse(text), *pools;
	size_t n = 0;

	if (root && json_object_object_get_ex(root, "pools", &pools) &&
	    json_object_is_type(pools, json_type_object))
		n = (size_t)json_object_object_length(pools);
	json_object_put(root);
	return n;
}

struct nodepools_args {
	const char *node;
	const char *input;
	const char *output;
	bool to_stdout;
	bool allow_empty;
};

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The nodes the pools' status gives a block, sorted, for a --node that matched none. */
static void nodes_with_blocks(const struct k8s_objects *objs, char *buf, size_t size)
{
	_cleanup_free_ const char **names = NULL;
	size_t n = 0, cap = 0, o = 0, shown = 0, distinct = 0;

	for (size_t i = 0; i < objs->n_items; i++) {
		const char *kind = k8s_object_kind(objs->items[i]);
		struct json_object *status = cjson_member_any(objs->items[i], "status");
		struct json_object *allocs = cjson_member_any(status, "allocations");

		if (!kind || (strcmp(kind, "IPPool") != 0 && strcmp(kind, "CIDRPool") != 0) ||
		    !json_object_is_type(allocs, json_type_array))
			continue;
		for (size_t k = 0; k < json_object_array_length(allocs); k++) {
			struct json_object *e = json_object_array_get_idx(allocs, k);
			struct json_object *nn = cjson_member_any(e, "nodeName");

			if (!json_object_is_type(nn, json_type_string))
				continue;
			if (n == cap) {
				const char **v = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*v));

				if (!v)
					break;
				names = v;
			}
			names[n++] = json_object_get_string(nn);
		}
	}
	snprintf(buf, size, "none");
	if (n == 0)
		return;
	qsort(names, n, sizeof(*names), str_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(names[i - 1], names[i]) == 0)
			continue;
		distinct++;
		/* Room kept for the count of those that do not fit. */
		if (o + strlen(names[i]) + 2 < size - 24) {
			o += (size_t)snprintf(buf + o, size - o, "%s%s", shown ? ", " : "", names[i]);
			shown++;
		}
	}
	if (shown < distinct)
		snprintf(buf + o, size - o, " and %zu more", distinct - shown);
}

static int nodepools_option(int opt, const char *arg, void *ctx)
{
	struct nodepools_args *a = ctx;

	if (opt == 'n')
		a->node = arg;
	else if (opt == 'i')
		a->input = arg;
	else if (opt == 'o')
		a->output = arg;
	else if (opt == 's')
		a->to_stdout = true;
	else if (opt == 'e')
		a->allow_empty = true;
	else
		return cli_usage_error("node-pools", "invalid option");
	return 0;
}

int nodepools_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'n' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "stdout", no_argument, NULL, 's' },
		{ "allow-empty", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct nodepools_args a = { .node = getenv("NODE_NAME"), .input = "-" };
	_cleanup_free_ char *text = NULL, *old = NULL, *notes_text = NULL;
	size_t notes_len = 0;
	const char *node, *input, *output;
	struct k8s_objects objs = { 0 };
	struct cni_err err = { 0 };
	size_t old_len = 0;
	const char *step;
	int r, r2;

	r = cli_options("node-pools", nodepools_help, argc, argv, opts, nodepools_option, &a, NULL);
	if (r <= 0)
		return -r;
	node = a.node;
	input = a.input;
	output = a.output;
	if (!node || !*node)
		return cli_usage_error("node-pools", "--node (or $NODE_NAME) is required");
	if (output && a.to_stdout)
		return cli_usage_error("node-pools", "--output and --stdout exclude each other");

	r = k8s_objects_read(input, &objs, &err);
	if (r >= 0) {
		FILE *notes = open_memstream(&notes_text, &notes_len);

		r = notes ? nodefile_render(&objs, node, &text, notes, &err)
			  : cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		if (notes && fclose(notes) == 0)
			print_notes(notes_text);
	}
	if (r >= 0 && !a.allow_empty && nodepools_count(text) == 0) {
		char nodes[512];

		nodes_with_blocks(&objs, nodes, sizeof(nodes));
		r = cni_err_set(&err, CNI_ERR_INVALID_CONFIG, -ENOENT,
				"no pool gives node \"%s\" a block (a mistyped name, or a node the "
				"controller has not reached yet): nothing written (--allow-empty writes a "
				"file of no pool); the nodes with blocks: %s", node, nodes);
	}
	k8s_objects_free(&objs);
	if (r < 0)
		return cli_fail(&err);
	/* The node's own file is ipam-node's: written only where --output names it. */
	if (!output) {
		fputs(text, stdout);
		return CLI_EXIT_OK;
	}
	r = file_read(output, POOL_FILE_MAX_BYTES, &old, &old_len);
	if (r < 0 && r != -ENOENT) {
		cni_err_set(&err, CNI_ERR_IO, r, "cannot read %s: %s", output, strerror(-r));
		return cli_fail(&err);
	}
	if (r >= 0 && old_len == strlen(text) && memcmp(old, text, old_len) == 0) {
		printf("%s unchanged\n", output);
		return CLI_EXIT_OK;
	}
	r2 = file_write_atomic(output, text, strlen(text), 0644, &step);
	if (r2 == -ENOENT) {
		cni_err_set(&err, CNI_ERR_IO, r2, "cannot write %s: its directory does not exist "
			    "(node-pools makes none)", output);
		return cli_fail(&err);
	}
	if (r2 < 0) {
		cni_err_set(&err, CNI_ERR_IO, r2, "cannot write %s: %s: %s", output, step, strerror(-r2));
		return cli_fail(&err);
	}
	printf("%s %s\n", output, r < 0 ? "created" : "updated");
	nodefile_changes(r < 0 ? NULL : old, old_len, text, stdout);
	return CLI_EXIT_OK;
}
