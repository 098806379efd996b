/* The carve subcommand: pools and nodes in, the pools with their new status out */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/json.h"
#include "ipam/nv-ipam/carve/carve.h"
#include "ipam/nv-ipam/k8s/k8s.h"
#include "ipam/nv-ipam/tool/carve_cmd.h"
#include "ipam/nv-ipam/tool/cli.h"

static const char carve_help[] =
	"Usage: nv-ipam-tool carve --pools FILE --nodes FILE\n"
	"\n"
	"Compute every pool's status.allocations exactly as the nv-ipam controller does:\n"
	"nodes matching spec.nodeSelector in name order, valid existing allocations kept,\n"
	"first-fit aligned blocks for the others (skipping taken, statically reserved and\n"
	"fully excluded blocks and a one-address gateway block), CIDRPool static\n"
	"allocations and gateways from gatewayIndex.\n"
	"\n"
	"  --pools FILE   IPPool/CIDRPool objects: kubectl get ippools,cidrpools -o json\n"
	"                 (a List, an array or objects; '-' reads stdin)\n"
	"  --nodes FILE   nodes: kubectl get nodes -o json, or [{\"name\",\"labels\"}]\n"
	"  -h, --help     this text\n"
	"\n"
	"Prints a List of the pools with status.allocations replaced. An invalid spec gives\n"
	"an empty status (InvalidSpec) and a node without a free block is left out\n"
	"(NoFreeRanges, NoFreePrefixes); both are reported on stderr.\n";

static int set_status(struct json_object *pool, struct json_object *allocs)
{
	struct json_object *status = json_object_new_object();

	if (!status || json_object_object_add(status, "allocations", allocs) < 0) {
		json_object_put(status);
		json_object_put(allocs);
		return -ENOMEM;
	}
	if (json_object_object_add(pool, "status", status) < 0) {
		json_object_put(status);
		return -ENOMEM;
	}
	return 0;
}

struct carve_args {
	const char *pools;
	const char *nodes;
};

static int carve_option(int opt, const char *arg, void *ctx)
{
	struct carve_args *a = ctx;

	if (opt == 'p')
		a->pools = arg;
	else if (opt == 'n')
		a->nodes = arg;
	else
		return cli_usage_error("carve", "invalid option");
	return 0;
}

int carve_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pools", required_argument, NULL, 'p' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	_cleanup_(json_object_putp) struct json_object *list = NULL;
	_cleanup_free_ struct carve_node *nodes = NULL;
	struct k8s_objects pools = { 0 }, node_objs = { 0 };
	struct carve_args a = { 0 };
	const char *pools_path, *nodes_path;
	struct json_object *items;
	struct cni_err err = { 0 };
	size_t n_nodes = 0;
	int ret;

	ret = cli_options("carve", carve_help, argc, argv, opts, carve_option, &a, NULL);
	if (ret <= 0)
		return -ret;
	ret = CLI_EXIT_FAIL;
	pools_path = a.pools;
	nodes_path = a.nodes;
	if (!pools_path || !nodes_path)
		return cli_usage_error("carve", "--pools and --nodes are required");
	if (strcmp(pools_path, "-") == 0 && strcmp(nodes_path, "-") == 0)
		return cli_usage_error("carve", "--pools and --nodes cannot both be stdin");

	if (k8s_objects_read(pools_path, &pools, &err) < 0 ||
	    k8s_objects_read(nodes_path, &node_objs, &err) < 0 ||
	    carve_nodes_from_objects(&node_objs, &nodes, &n_nodes, &err) < 0)
		goto out;
	list = json_object_new_object();
	items = json_object_new_array();
	if (!list || !items || json_object_object_add(list, "apiVersion", json_object_new_string("v1")) ||
	    json_object_object_add(list, "kind", json_object_new_string("List")) ||
	    json_object_object_add(list, "items", items)) {
		cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < pools.n_items; i++) {
		struct json_object *pool = pools.items[i], *allocs = NULL;
		struct carve_result res = { 0 };
		const char *name;

		if (carve_pool(pool, nodes, n_nodes, &res, &err) < 0)
			goto out;
		name = k8s_object_name(pool);
		if (res.invalid)
			fprintf(stderr, "nv-ipam-tool: %s %s: Warning InvalidSpec: %s\n",
				res.cidrpool ? "CIDRPool" : "IPPool", name, res.reason);
		for (size_t j = 0; j < res.n_unplaced; j++)
			fprintf(stderr, "nv-ipam-tool: %s %s: Warning %s: no free %s for node %s\n",
				res.cidrpool ? "CIDRPool" : "IPPool", name,
				res.cidrpool ? "NoFreePrefixes" : "NoFreeRanges",
				res.cidrpool ? "prefix" : "range", res.unplaced[j]);
		if (carve_result_json(&res, &allocs) < 0 || set_status(pool, allocs) < 0 ||
		    json_object_array_add(items, json_object_get(pool)) < 0) {
			carve_result_free(&res);
			cni_err_set(&err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			goto out;
		}
		carve_result_free(&res);
	}
	printf("%s\n", json_object_to_json_string_ext(list, K8S_JSON_PRETTY));
	ret = CLI_EXIT_OK;
out:
	k8s_objects_free(&pools);
	k8s_objects_free(&node_objs);
	return ret == CLI_EXIT_OK ? ret : cli_fail(&err);
}
