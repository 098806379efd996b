/* The check subcommand: the store's integrity against the node pool file */
#pragma once

/**
 * check_main() - "check": the store's integrity against the node pool file
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int check_main(int argc, char **argv);
