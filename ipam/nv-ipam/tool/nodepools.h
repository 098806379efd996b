/* The node-pools subcommand: this node's pool file from the pools' status */
#pragma once

/**
 * nodepools_main() - "node-pools": write this node's pool file from the pools' status
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int nodepools_main(int argc, char **argv);
