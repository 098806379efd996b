/* host-device: the state ADD found on a device, kept on the node until DEL gives it back */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/env.h"
#include "common/net/link.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/guid.h"
#include "common/util/log.h"
#include "common/util/signals.h"
#include "common/util/text.h"
#include "plugins/host-device/guid.h"
#include "plugins/host-device/state.h"

/*
 * The body, in lines (common/record writes the first): the attachment (16 hex
 * digits), "up 0|1", "mtu N", "alias " and the alias as text_escape() writes
 * it (no newline can be in it). Version 2 adds "guid " and 16 hex digits, the
 * GUID to give back; a state without one is still written as version 1, which
 * plugins before GUIDs read. Anything else is not a state of ours.
 */
#define STATE_KIND "host-device"
#define STATE_MAX_BYTES 4096

static const char *state_dir = HOSTDEV_STATE_DIR;

void hostdev_state_set_dir(const char *dir)
{
	state_dir = dir ? dir : HOSTDEV_STATE_DIR;
}

uint64_t hostdev_state_attachment(const char *container_id, const char *ifname)
{
	uint64_t h = text_hash64(container_id, strlen(container_id) + 1, TEXT_HASH64_INIT);

	return text_hash64(ifname, strlen(ifname), h);
}

int hostdev_state_save(const char *orig, const struct hostdev_state *s)
{
	char alias[4 * sizeof(s->alias)], text[sizeof(alias) + 160], guid[32] = "";
	int n;

	if (cni_env_ifname_invalid(orig))
		return -EINVAL;
	text_escape(s->alias, strnlen(s->alias, sizeof(s->alias)), alias, sizeof(alias));
	if (s->has_guid)
		snprintf(guid, sizeof(guid), "guid %016" PRIx64 "\n", s->guid);
	n = snprintf(text, sizeof(text), "%016" PRIx64 "\nup %d\nmtu %u\nalias %s\n%s",
		     s->attachment, s->up, s->mtu, alias, guid);
	if (n < 0 || (size_t)n >= sizeof(text))
		return -ENAMETOOLONG;
	return record_save(state_dir, orig, STATE_KIND, s->has_guid ? 2 : 1, text);
}

static int parse(char *p, unsigned int version, struct hostdev_state *ret)
{
	struct hostdev_state s = { 0 };
	char *v, *end;
	size_t len;

	if (!(v = record_line(&p, "")) || strlen(v) != 16)
		return -EBADMSG;
	s.attachment = strtoull(v, &end, 16);
	if (*end)
		return -EBADMSG;
	if (!(v = record_line(&p, "up ")) || (strcmp(v, "0") != 0 && strcmp(v, "1") != 0))
		return -EBADMSG;
	s.up = v[0] == '1';
	if (!(v = record_line(&p, "mtu ")) || !*v || strspn(v, "0123456789") != strlen(v) ||
	    strlen(v) > 7)
		return -EBADMSG;
	s.mtu = (unsigned int)strtoul(v, NULL, 10);
	if (!(v = record_line(&p, "alias ")))
		return -EBADMSG;
	if (text_unescape(v, strlen(v), &len) < 0 || len >= sizeof(s.alias))
		return -EBADMSG;
	memcpy(s.alias, v, len);
	if (version == 2) {
		if (!(v = record_line(&p, "guid ")) || strlen(v) != 16 ||
		    strspn(v, "0123456789abcdef") != 16)
			return -EBADMSG;
		s.guid = strtoull(v, NULL, 16);
		s.has_guid = true;
	}
	if (*p)
		return -EBADMSG;
	*ret = s;
	return 0;
}

int hostdev_state_load(const char *orig, struct hostdev_state *ret)
{
	_cleanup_free_ char *body = NULL;
	unsigned int version;
	int r;

	if (cni_env_ifname_invalid(orig))
		return -EINVAL;
	r = record_load(state_dir, orig, STATE_KIND, 2, STATE_MAX_BYTES, &body, &version);
	if (r < 0)
		return r;
	return parse(body, version, ret);
}

int hostdev_state_remove(const char *orig)
{
	if (cni_env_ifname_invalid(orig))
		return -EINVAL;
	return record_remove(state_dir, orig);
}

void hostdev_state_restore(const char *orig, uint64_t attachment)
{
	struct hostdev_state s;
	struct net_link link;
	int r;

	r = hostdev_state_load(orig, &s);
	if (r == -ENOENT || (r == 0 && s.attachment != attachment))
		return;
	if (r < 0) {
		log_warning("DEL: cannot read the state ADD kept of %s: %s; it stays down", orig,
			    strerror(-r));
		return;
	}
	r = net_link_get_by_name(NULL, orig, &link);
	if (r == -ENODEV) {
		/*
		 * Not back (yet): the kernel hands a physical device back from a
		 * destroyed netns in its own time, and the ADD of it that follows
		 * (or a later DEL) uses the state. A virtual device is gone with the
		 * netns; its state stays until the name is ADDed again or the node
		 * reboots.
		 */
		log_debug("DEL: %s is not in the host; its state is kept", orig);
		return;
	}
	if (r >= 0 && s.has_guid) {
		char text[GUID_TEXT_SIZE];
		sigset_t sigmask;

		/* Between the bind and the rename the device has a name no DEL looks for. */
		signals_block_termination(&sigmask);
		r = hostdev_guid_restore(orig, s.guid, &link);
		signals_restore(&sigmask);
		if (r < 0) {
			log_warning("DEL: cannot give %s its GUID %s back: %s; the state is kept for "
				    "a later DEL", orig, guid_format(s.guid, text), strerror(-r));
			return;
		}
	}
	if (r >= 0 && strcmp(link.alias, s.alias) != 0)
		r = net_link_set_alias(NULL, link.ifindex, s.alias);
	if (r >= 0 && s.mtu && link.mtu != s.mtu)
		r = net_link_set_mtu(NULL, link.ifindex, s.mtu);
	if (r >= 0 && s.up && !(link.flags & IFF_UP))
		r = net_link_set_up(NULL, link.ifindex, true);
	if (r < 0) {
		log_warning("DEL: cannot give %s its alias, MTU %u and %s state back: %s", orig,
			    s.mtu, s.up ? "up" : "down", strerror(-r));
		return;
	}
	log_debug("DEL: %s is back with the alias, MTU and up state ADD found", orig);
	r = hostdev_state_remove(orig);
	if (r < 0)
		log_warning("DEL: cannot remove the state kept of %s: %s", orig, strerror(-r));
}
