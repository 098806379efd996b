/* firewall's firewalld backend: each address a source of a zone, over D-Bus */
#include <errno.h>
#include <string.h>

#include "common/dbus/dbus.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "common/util/log.h"
#include "plugins/firewall/firewalld.h"

#define FIREWALLD "org.fedoraproject.FirewallD1"
#define FIREWALLD_PATH "/org/fedoraproject/FirewallD1"
#define ZONE_IFACE "org.fedoraproject.FirewallD1.zone"

bool firewalld_running(struct dbus_conn **ret)
{
	const char *name[] = { FIREWALLD };
	struct dbus_reply reply;
	struct cni_err e = { 0 };
	struct dbus_conn *c = NULL;

	*ret = NULL;
	if (dbus_connect_system(&c, &e) < 0)
		return false;
	if (dbus_call(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
		      "GetNameOwner", name, 1, &reply, &e) < 0 || reply.is_error) {
		dbus_close(c);
		return false;
	}
	*ret = c;
	return true;
}

/* One zone method on one address: its reply, or the call's failure. */
static int zone_call(struct dbus_conn *c, const char *member, const char *zone,
		     const struct ip_prefix *ip, struct dbus_reply *reply, char *text, size_t size,
		     struct cni_err *err)
{
	const char *args[] = { zone, text };

	ip_prefix_format(ip, text, size);
	return dbus_call(c, FIREWALLD, FIREWALLD_PATH, ZONE_IFACE, member, args, 2, reply, err);
}

int firewalld_del(struct dbus_conn *c, const char *zone, const struct ip_prefix *ips, size_t n,
		  struct cni_err *err)
{
	for (size_t i = 0; i < n; i++) {
		char text[IP_PREFIX_STRLEN];
		struct dbus_reply reply;
		int r = zone_call(c, "removeSource", zone, &ips[i], &reply, text, sizeof(text), err);

		if (r < 0)
			return r;
		if (reply.is_error)
			log_debug("removeSource %s from %s: %s", text, zone, reply.text);
	}
	return 0;
}

int firewalld_add(struct dbus_conn *c, const char *zone, const struct ip_prefix *ips, size_t n,
		  struct cni_err *err)
{
	for (size_t i = 0; i < n; i++) {
		char text[IP_PREFIX_STRLEN];
		struct dbus_reply reply;
		int r = zone_call(c, "addSource", zone, &ips[i], &reply, text, sizeof(text), err);

		if (r >= 0 && reply.is_error && !strstr(reply.text, "ZONE_ALREADY_SET"))
			r = cni_err_set(err, CNI_ERR_KERNEL, -EIO,
					"failed to add the address %s to %s zone: %s: %s", text, zone,
					reply.error_name, reply.text);
		if (r < 0) {
			struct cni_err e = { 0 };

			if (firewalld_del(c, zone, ips, i, &e) < 0)
				log_warning("undo: %s", e.msg);
			return r;
		}
	}
	return 0;
}

int firewalld_check(struct dbus_conn *c, const char *zone, const struct ip_prefix *ips, size_t n,
		    struct cni_err *err)
{
	for (size_t i = 0; i < n; i++) {
		char text[IP_PREFIX_STRLEN];
		struct dbus_reply reply;
		int r = zone_call(c, "querySource", zone, &ips[i], &reply, text, sizeof(text), err);

		if (r < 0)
			return r;
		if (reply.is_error || !reply.boolean)
			return cni_err_set(err, CNI_ERR_CHECK_FAILED, -ENOENT,
					   "failed to find the address %s in %s zone%s%s", text, zone,
					   reply.is_error ? ": " : "", reply.is_error ? reply.text : "");
	}
	return 0;
}
