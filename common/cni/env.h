/* CNI environment variables: presence per command and validation */
#pragma once

#include <stdbool.h>

struct cni_err;

enum cni_command {
	CNI_CMD_NONE,
	CNI_CMD_ADD,
	CNI_CMD_DEL,
	CNI_CMD_CHECK,
	CNI_CMD_VERSION,
	CNI_CMD_STATUS,
	CNI_CMD_GC,
	CNI_CMD_UNKNOWN,
};

struct cni_env {
	enum cni_command command;
	const char *command_name; /* as given */
	const char *container_id; /* "" when unset */
	const char *netns;
	const char *ifname;
	const char *args;
	const char *path;
	bool netns_override;      /* CNI_NETNS_OVERRIDE=1|true */
};

/**
 * cni_command_name() - the CNI_COMMAND spelling of a command
 * @cmd: command
 *
 * Return: "ADD", "DEL", ...
 */
const char *cni_command_name(enum cni_command cmd);

/**
 * cni_env_load() - read the CNI_* variables and check them for the command
 * @ret: environment (strings point into the process environment)
 * @err: code 4 for missing or invalid variables
 *
 * Return: 0 on success, negative errno on failure. @ret->command is set even on
 * failure so the caller can tell which command failed.
 */
int cni_env_load(struct cni_env *ret, struct cni_err *err);

/**
 * cni_env_valid_id() - container IDs and network names: ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$
 * @s: text
 *
 * Return: true when valid.
 */
bool cni_env_valid_id(const char *s);

/**
 * cni_env_ifname_invalid() - what is wrong with an interface name, by the kernel's and Go's rules
 * @name: interface name
 *
 * 1 to 15 bytes of UTF-8, not "." or "..", without '/', ':', anything Go's
 * unicode.IsSpace() takes as space, or byte 0xa0 (space to the kernel).
 *
 * Return: NULL when valid, else the reason ("longer than 15 bytes", ...).
 */
const char *cni_env_ifname_invalid(const char *name);

/**
 * cni_env_check_ifname() - cni_env_ifname_invalid() for CNI_IFNAME
 * @name: interface name
 * @err: code 4 with the reason
 *
 * Return: 0 when valid, -EINVAL otherwise.
 */
int cni_env_check_ifname(const char *name, struct cni_err *err);
