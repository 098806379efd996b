/* The release subcommand: release allocations by container ID or by pod, under the store lock */
#pragma once

/**
 * release_main() - "release": release allocations by container ID or by pod, under the store lock
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int release_main(int argc, char **argv);
