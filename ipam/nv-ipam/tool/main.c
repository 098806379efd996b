/* nv-ipam-tool: the operator's side of nv-ipam (carving blocks, node pool files, the store) */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "ipam/nv-ipam/store/store.h"
#include "ipam/nv-ipam/tool/carve_cmd.h"
#include "ipam/nv-ipam/tool/check.h"
#include "ipam/nv-ipam/tool/cli.h"
#include "ipam/nv-ipam/tool/gc.h"
#include "ipam/nv-ipam/tool/handover.h"
#include "ipam/nv-ipam/tool/nodepools.h"
#include "ipam/nv-ipam/tool/release.h"
#include "ipam/nv-ipam/tool/show.h"

struct subcommand {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "carve", carve_main, "compute pools' status allocations as the nv-ipam controller does" },
	{ "node-pools", nodepools_main, "write this node's pool file from the pools' status" },
	{ "show", show_main, "show the store: blocks, used and free counts, allocations" },
	{ "release", release_main, "release allocations by container ID or by pod" },
	{ "check", check_main, "check the store against the node pool file (and a pod listing)" },
	{ "gc", gc_main, "release the allocations whose pod is gone (from a pod listing)" },
	{ "handover", handover_main, "write the store for the reference nv-ipam daemon (rollback)" },
	{ "adopt", adopt_main, "take the store back, or over from the reference daemon" },
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: nv-ipam-tool COMMAND [OPTIONS]\n"
		     "       nv-ipam-tool COMMAND --help\n"
		     "       nv-ipam-tool --version\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
		fprintf(out, "  %-11s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(out, "\nExit status: 0 success, 1 failure or problems found, 2 bad usage.\n");
}

int main(int argc, char **argv)
{
	/* The store's lines are the tool's: a plugin's "cni[PID]" lines would mislead. */
	log_set_sink(cli_log_sink, NULL);
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("nv-ipam-tool (cni-rdma-plugins) %s\n%s\n", PROJECT_VERSION, NVIPAM_STORE_FORMATS);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].main(argc - 1, argv + 1);
	fprintf(stderr, "nv-ipam-tool: unknown command \"%s\"\n", argv[1]);
	usage(stderr);
	return CLI_EXIT_USAGE;
}
