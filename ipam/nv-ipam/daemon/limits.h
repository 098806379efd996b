/* The daemons' process limits, raised to what their servers may hold */
#pragma once

/**
 * daemon_raise_nofile() - the open-file soft limit raised to the hard one
 *
 * Each HTTP server of a daemon may hold 512 connections (serve/http.c) and a daemon runs
 * two or three, past the usual soft limit of 1024; Go programs, the reference's among
 * them, raise it at start the same way.
 *
 * Return: the soft limit now in force, or -errno when it could not be read.
 */
long daemon_raise_nofile(void);
