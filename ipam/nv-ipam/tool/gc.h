/* The gc subcommand: release the allocations whose pod is gone from the node's pod listing */
#pragma once

/**
 * gc_main() - "gc": release the allocations whose pod is gone from the node's pod listing
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int gc_main(int argc, char **argv);
