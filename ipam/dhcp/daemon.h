/* dhcp daemon: the leases of every container, served to the plugin over a unix socket */
#pragma once

/**
 * dhcp_daemon_main() - "dhcp daemon [flags]": upstream v1.9.1's flags, run until SIGTERM
 * @argc: arguments after "daemon"
 * @argv: them
 *
 * Return: the exit status (2 for a flag error, as Go's flag package).
 */
int dhcp_daemon_main(int argc, char **argv);
