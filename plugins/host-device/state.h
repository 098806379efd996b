/* host-device: the state ADD found on a device, kept on the node until DEL gives it back */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/record/record.h"

/*
 * Where the states are kept: one file per device, named by its original name.
 * Under /run, since what it describes does not outlive a boot: after a
 * reboot every device is back in the host as the node configures it.
 */
#define HOSTDEV_STATE_DIR RECORD_ROOT "/host-device"

/* What DEL restores: the device as ADD found it in the host. */
struct hostdev_state {
	uint64_t attachment;  /* hostdev_state_attachment() of the ADD that kept it */
	bool up;
	unsigned int mtu;
	char alias[256];      /* IFLA_IFALIAS, "" for none */
	bool has_guid;        /* ADD set an InfiniBand VF's GUIDs: */
	uint64_t guid;        /* the node and port GUID DEL gives it back */
};

/**
 * hostdev_state_set_dir() - keep the states in another directory (unit tests only)
 * @dir: absolute path, NULL for HOSTDEV_STATE_DIR again
 */
void hostdev_state_set_dir(const char *dir);

/**
 * hostdev_state_attachment() - the attachment a state belongs to, as a short stable number
 * @container_id: CNI_CONTAINERID
 * @ifname: CNI_IFNAME
 *
 * Return: a hash of both.
 */
uint64_t hostdev_state_attachment(const char *container_id, const char *ifname);

/**
 * hostdev_state_save() - keep a device's state for DEL, replacing an older one
 * @orig: the device's original name (a valid interface name)
 * @s: the state
 *
 * A record of common/record: its folder's rules, its atomic save.
 *
 * Return: 0 on success, negative errno on failure.
 */
int hostdev_state_save(const char *orig, const struct hostdev_state *s);

/**
 * hostdev_state_load() - the state kept for a device
 * @orig: the device's original name
 * @ret: the state, written only on success
 *
 * Return: 0 on success, -ENOENT when none is kept, -EBADMSG for a file that is
 * not one this plugin wrote, negative errno otherwise.
 */
int hostdev_state_load(const char *orig, struct hostdev_state *ret);

/**
 * hostdev_state_remove() - forget the state kept for a device
 * @orig: the device's original name
 *
 * Return: 0 when removed or when there was none, negative errno otherwise.
 */
int hostdev_state_remove(const char *orig);

/**
 * hostdev_state_restore() - give a device back in the host what its ADD kept, and forget it
 * @orig: the device's name in the host, its original one
 * @attachment: hostdev_state_attachment() of the DEL: a state kept by another
 *              attachment's ADD is left alone
 *
 * Gives an InfiniBand VF its GUID back first (its driver binds again, which
 * resets the rest), then sets the alias, the MTU and the up state, each only
 * when it differs, and removes the state. A device not in the host keeps its state (the kernel
 * hands a physical device back from a destroyed netns in its own time).
 * Failures are logged and keep the state for a later DEL: the device is
 * home, which is what DEL must achieve.
 */
void hostdev_state_restore(const char *orig, uint64_t attachment);
