/* The carve subcommand: pools and nodes in, the pools with their new status out */
#pragma once

/**
 * carve_main() - "carve": IPPool/CIDRPool objects and nodes in, status allocations out
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int carve_main(int argc, char **argv);
