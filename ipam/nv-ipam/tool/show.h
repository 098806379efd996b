/* The show subcommand: the store per pool: blocks, used and free counts, allocations */
#pragma once

/**
 * show_main() - "show": the store per pool: blocks, used and free counts, allocations
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int show_main(int argc, char **argv);
