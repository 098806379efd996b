/* The handover and adopt subcommands: the store handed to the reference nv-ipam daemon, and taken back */
#pragma once

/**
 * handover_main() - "handover": write the store in the reference daemon's format and
 *                   stop nv-ipam from allocating, as ipam-node does when it stops
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int handover_main(int argc, char **argv);

/**
 * adopt_main() - "adopt": take the store back (or over from the reference daemon), as
 *                ipam-node does when it starts
 * @argc: argument count (argv[0] is the subcommand)
 * @argv: arguments
 *
 * Return: the exit status.
 */
int adopt_main(int argc, char **argv);
