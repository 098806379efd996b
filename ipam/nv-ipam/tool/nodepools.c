/*
 * The node-pools subcommand: this node's pool file from the pools' status (nodefile.c),
 * rewritten (atomically) only when its bytes change, each change reported
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/cni/error.h"
#include "common/cni/json.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "ipam/nv-ipam/pool/pool.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/k8s/nodefile.h"
#include "ipam/nv-ipam/tool/nodepools.h"

#define POOL_FILE_MAX_BYTES (64u << 20)

static const char nodepools_help[] =
	"Usage: nv-ipam-tool node-pools --node NAME [--input FILE] [--output FILE | --stdout]\n"
	"\n"
	"Write NAME's node pool file from IPPool/CIDRPool objects with the status the\n"
	"nv-ipam controller wrote (kubectl get ippools,cidrpools -o json). The file is\n"
	"replaced atomically, and only when its contents change; each added, removed or\n"
	"changed pool is reported on stdout, or \"unchanged\".\n"
	"\n"
	"  --node NAME     the node (default: $NODE_NAME)\n"
	"  --input FILE    pool objects ('-', the default, reads stdin)\n"
	"  --output FILE   the node pool file (default " NVIPAM_DEFAULT_POOL_FILE ")\n"
	"  --stdout        print the file instead of writing it\n"
	"  -h, --help      this text\n";

static const char *entry_summary(struct json_object *e, char *buf, size_t len)
{
	struct json_object *p = k8s_object_member(e, "prefix", NULL);

	if (p)
		snprintf(buf, len, "%s", json_object_get_string(p));
	else
		snprintf(buf, len, "%s-%s", json_object_get_string(k8s_object_member(e, "startIP", NULL)),
			 json_object_get_string(k8s_object_member(e, "endIP", NULL)));
	return buf;
}

/* One line per pool added, removed or changed between the old and the new file. */
static void report_changes(const char *old_text, size_t old_len, const char *new_text)
{
	_cleanup_(json_object_putp) struct json_object *old = NULL, *cur = NULL;
	struct json_object *op, *np;
	struct cni_err e = { 0 };
	char a[128], b[128];

	if (old_text && cjson_parse(old_text, old_len, "old pool file", &old, &e) < 0)
		old = NULL;
	if (cjson_parse(new_text, strlen(new_text), "new pool file", &cur, &e) < 0)
		return;
	op = k8s_object_member(old, "pools", NULL);
	np = k8s_object_member(cur, "pools", NULL);
	if (!json_object_is_type(np, json_type_object))
		return;
	for (struct json_object_iterator it = json_object_iter_begin(np), end = json_object_iter_end(np);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *key = json_object_iter_peek_name(&it);
		struct json_object *val = json_object_iter_peek_value(&it);
		struct json_object *was = k8s_object_member(op, key, NULL);

		if (!was)
			printf("pool %s: added (%s)\n", key, entry_summary(val, a, sizeof(a)));
		else if (!json_object_equal(was, val))
			printf("pool %s: changed (%s -> %s)\n", key, entry_summary(was, a, sizeof(a)),
			       entry_summary(val, b, sizeof(b)));
	}
	if (!json_object_is_type(op, json_type_object))
		return;
	for (struct json_object_iterator it = json_object_iter_begin(op), end = json_object_iter_end(op);
	     !json_object_iter_equal(&it, &end); json_object_iter_next(&it))
		if (!k8s_object_member(np, json_object_iter_peek_name(&it), NULL))
			printf("pool %s: removed\n", json_object_iter_peek_name(&it));
}

struct nodepools_args {
	const char *node;
	const char *input;
	const char *output;
	bool to_stdout;
};

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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct nodepools_args a = { .node = getenv("NODE_NAME"), .input = "-",
				    .output = NVIPAM_DEFAULT_POOL_FILE };
	_cleanup_free_ char *text = NULL, *old = NULL;
	const char *node, *input, *output;
	struct k8s_objects objs = { 0 };
	struct cni_err err = { 0 };
	size_t old_len = 0;
	const char *step;
	int r, r2;

	r = cli_options("node-pools", nodepools_help, argc, argv, opts, nodepools_option, &a, NULL);
	if (r >= 0)
		return r;
	node = a.node;
	input = a.input;
	output = a.output;
	if (!node || !*node)
		return cli_usage_error("node-pools", "--node (or $NODE_NAME) is required");

	r = k8s_objects_read(input, &objs, &err);
	if (r >= 0)
		r = nodefile_render(&objs, node, &text, &err);
	k8s_objects_free(&objs);
	if (r < 0)
		return cli_fail(&err);
	if (a.to_stdout) {
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
	r2 = file_make_parents(output, 0755);
	if (r2 >= 0)
		r2 = file_write_atomic(output, text, strlen(text), 0644, &step);
	else
		step = "create directory";
	if (r2 < 0) {
		cni_err_set(&err, CNI_ERR_IO, r2, "cannot write %s: %s: %s", output, step, strerror(-r2));
		return cli_fail(&err);
	}
	printf("%s %s\n", output, r < 0 ? "created" : "updated");
	report_changes(r < 0 ? NULL : old, old_len, text);
	return CLI_EXIT_OK;
}
