/* firewall's firewalld backend: each address a source of a zone, over D-Bus */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cni_err;
struct dbus_conn;
struct ip_prefix;

/**
 * firewalld_running() - whether firewalld has its name on the system bus (GetNameOwner)
 * @ret: the connection, kept for the calls that follow when it runs; NULL otherwise
 *
 * Return: true when it runs.
 */
bool firewalld_running(struct dbus_conn **ret);

/**
 * firewalld_add() - addSource(zone, address) for each address; one a zone already has is
 *                   no error (ZONE_ALREADY_SET), as upstream; a failure takes back the ones before
 * @c: connection (dbus_connect_system())
 * @zone: the zone
 * @ips: the addresses (A/32, A/128)
 * @n: their number
 * @err: code 100 with firewalld's error
 *
 * Return: 0 on success, negative errno on failure.
 */
int firewalld_add(struct dbus_conn *c, const char *zone, const struct ip_prefix *ips, size_t n,
		  struct cni_err *err);

/**
 * firewalld_del() - removeSource(zone, address) for each address; firewalld's refusals
 *                   (not bound to it) are no error, as upstream
 * @c: connection
 * @zone: the zone
 * @ips: the addresses
 * @n: their number
 * @err: code 100 when the bus cannot be reached
 *
 * Return: 0 on success, negative errno when a call cannot be made.
 */
int firewalld_del(struct dbus_conn *c, const char *zone, const struct ip_prefix *ips, size_t n,
		  struct cni_err *err);

/**
 * firewalld_check() - querySource(zone, address) is true for each address
 * @c: connection
 * @zone: the zone
 * @ips: the addresses
 * @n: their number
 * @err: code 103 naming the address missing, 100 when a call cannot be made
 *
 * Return: 0 when each is, negative errno otherwise.
 */
int firewalld_check(struct dbus_conn *c, const char *zone, const struct ip_prefix *ips, size_t n,
		    struct cni_err *err);
