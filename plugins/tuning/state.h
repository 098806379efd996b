/* tuning: what ADD found before it changed a pod's interface, kept on the node until DEL */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/record/record.h"
#include "common/util/hwaddr.h"
#include "plugins/tuning/config.h"

/*
 * One file per attachment, "<container ID>:<ifname>" (neither can hold a
 * ':'). Under /run, as what it describes does not outlive a boot; never
 * where a network config says (upstream's dataDir).
 */
#define TUNING_STATE_DIR RECORD_ROOT "/tuning"
/* TUNING_MAX_SYSCTLS lines of a path and a value, escaped, fit. */
#define TUNING_STATE_MAX_BYTES (1u << 20)

struct tuning_state_sysctl {
	char path[TUNING_SYSCTL_PATH_MAX]; /* below /proc/sys/net */
	char value[TUNING_SYSCTL_VALUE_MAX];
};

/* The original values of what ADD changes; each only when ADD changes it. */
struct tuning_state {
	bool has_mac;
	uint8_t mac[HWADDR_MAX];
	size_t mac_len;
	bool has_mtu;
	unsigned int mtu;
	bool has_promisc;
	bool promisc;
	bool has_allmulti;
	bool allmulti;
	bool has_txqlen;
	uint32_t txqlen;
	struct tuning_state_sysctl *sysctls; /* owned; the interface's own sysctls */
	size_t n_sysctls;
};

/**
 * tuning_state_free() - release what a state owns and zero it
 * @s: state
 */
void tuning_state_free(struct tuning_state *s);

/**
 * tuning_state_empty() - whether a state holds nothing DEL would restore
 * @s: state
 *
 * Return: true when empty.
 */
bool tuning_state_empty(const struct tuning_state *s);

/**
 * tuning_state_name() - the file name of an attachment's state
 * @container_id: CNI_CONTAINERID
 * @ifname: CNI_IFNAME
 * @buf: output
 * @size: its size
 *
 * Return: 0 on success, -EINVAL for an ID or a name that could not be one
 * (checked again here: they form a file name), -ENAMETOOLONG.
 */
int tuning_state_name(const char *container_id, const char *ifname, char *buf, size_t size);

/**
 * tuning_state_format() - the body of a state record (common/record adds its first line)
 * @s: state
 * @ret: malloc'ed, NUL-terminated text, written only on success
 *
 * Return: 0 on success, -ENOMEM.
 */
int tuning_state_format(const struct tuning_state *s, char **ret);

/**
 * tuning_state_parse() - a state from the body tuning_state_format() writes
 * @text: the file's contents, NUL-terminated (changed in place)
 * @ret: state, written only on success; release with tuning_state_free()
 *
 * Anything this plugin would not have written is refused whole.
 *
 * Return: 0 on success, -EBADMSG for text that is not a state, -ENOMEM.
 */
int tuning_state_parse(char *text, struct tuning_state *ret);

/**
 * tuning_state_save() - keep an attachment's state, replacing an older one
 * @name: tuning_state_name()
 * @s: state
 *
 * A record of common/record: its folder's rules, its atomic save.
 *
 * Return: 0 on success, negative errno on failure.
 */
int tuning_state_save(const char *name, const struct tuning_state *s);

/**
 * tuning_state_load() - the state kept for an attachment
 * @name: tuning_state_name()
 * @ret: state, written only on success
 *
 * Return: 0 on success, -ENOENT when none is kept, -EBADMSG for a file that is
 * not one this plugin wrote, negative errno otherwise.
 */
int tuning_state_load(const char *name, struct tuning_state *ret);

/**
 * tuning_state_remove() - forget an attachment's state
 * @name: tuning_state_name()
 *
 * Return: 0 when removed or when there was none, negative errno otherwise.
 */
int tuning_state_remove(const char *name);
