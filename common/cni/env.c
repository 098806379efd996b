/* CNI environment variables: presence per command and validation */
#include <ctype.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cni/env.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/text.h"

enum {
	NEED_CONTAINERID = 1U << 0,
	NEED_NETNS = 1U << 1,
	NEED_IFNAME = 1U << 2,
	NEED_PATH = 1U << 3,
};

static const struct {
	const char *name;
	enum cni_command cmd;
	unsigned int needs;
} commands[] = {
	{ "ADD", CNI_CMD_ADD, NEED_CONTAINERID | NEED_NETNS | NEED_IFNAME | NEED_PATH },
	{ "DEL", CNI_CMD_DEL, NEED_CONTAINERID | NEED_IFNAME | NEED_PATH },
	{ "CHECK", CNI_CMD_CHECK, NEED_CONTAINERID | NEED_NETNS | NEED_IFNAME | NEED_PATH },
	{ "VERSION", CNI_CMD_VERSION, 0 },
	{ "STATUS", CNI_CMD_STATUS, NEED_PATH },
	{ "GC", CNI_CMD_GC, NEED_PATH },
};

const char *cni_command_name(enum cni_command cmd)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (commands[i].cmd == cmd)
			return commands[i].name;
	return "";
}

static const char *env_or_empty(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "";
}

bool cni_env_valid_id(const char *s)
{
	if (!s || !isalnum((unsigned char)s[0]))
		return false;
	for (const char *p = s + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '-')
			return false;
	return true;
}

/* Go's unicode.IsSpace, which the reference applies to each character of a name. */
static bool go_space(uint32_t cp)
{
	switch (cp) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
	case 0x85: case 0xa0: case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f:
	case 0x3000:
		return true;
	default:
		return cp >= 0x2000 && cp <= 0x200a;
	}
}

const char *cni_env_ifname_invalid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0)
		return "is empty";
	if (len > 15)
		return "longer than 15 bytes";
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return "is . or ..";
	/*
	 * The name is a JSON string in the result and a key of the IPAM store: bytes
	 * that are not UTF-8 could be neither, and a store key rewritten on the way
	 * would never match the DEL. The kernel's own rule takes byte 0xa0 as space.
	 */
	if (!text_utf8_valid(name, len))
		return "is not valid UTF-8";
	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = text_utf8_decode(name + i, len - i, &cp);

		if (cp == '/' || cp == ':' || go_space(cp) || memchr(name + i, 0xa0, n))
			return "contains / or : or whitespace characters";
		i += n;
	}
	return NULL;
}

int cni_env_check_ifname(const char *name, struct cni_err *err)
{
	const char *why = cni_env_ifname_invalid(name);

	if (why)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL, "interface name \"%.64s\" %s", name,
				   why);
	return 0;
}

int cni_env_load(struct cni_env *ret, struct cni_err *err)
{
	const char *cmd = getenv("CNI_COMMAND");
	const char *override;
	char missing[256] = "";
	unsigned int needs = 0;
	size_t n = 0;

	*ret = (struct cni_env){
		.command = CNI_CMD_NONE,
		.command_name = cmd ? cmd : "",
		.container_id = env_or_empty("CNI_CONTAINERID"),
		.netns = env_or_empty("CNI_NETNS"),
		.ifname = env_or_empty("CNI_IFNAME"),
		.args = env_or_empty("CNI_ARGS"),
		.path = env_or_empty("CNI_PATH"),
	};
	override = env_or_empty("CNI_NETNS_OVERRIDE");
	ret->netns_override = strcmp(override, "1") == 0 || strcasecmp(override, "true") == 0;

	if (!cmd || !*cmd)
		return 0;
	ret->command = CNI_CMD_UNKNOWN;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(cmd, commands[i].name) == 0) {
			ret->command = commands[i].cmd;
			needs = commands[i].needs;
		}
	}
	if (ret->command == CNI_CMD_UNKNOWN)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
				   "unknown CNI_COMMAND: %s (one of ADD, DEL, CHECK, STATUS, GC, VERSION)", cmd);

#define CHECK_VAR(flag, var, value)                                                            \
	if ((needs & (flag)) && !*(value))                                                     \
		n += (size_t)snprintf(missing + n, sizeof(missing) - n, "%s%s", n ? " " : "", var);
	CHECK_VAR(NEED_CONTAINERID, "CNI_CONTAINERID", ret->container_id)
	CHECK_VAR(NEED_NETNS, "CNI_NETNS", ret->netns)
	CHECK_VAR(NEED_IFNAME, "CNI_IFNAME", ret->ifname)
	CHECK_VAR(NEED_PATH, "CNI_PATH", ret->path)
#undef CHECK_VAR
	if (n)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL, "required env variables [%s] missing",
				   missing);

	if ((needs & NEED_CONTAINERID) && !cni_env_valid_id(ret->container_id))
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
				   "invalid characters in containerID: \"%s\"", ret->container_id);
	if (needs & NEED_IFNAME)
		return cni_env_check_ifname(ret->ifname, err);
	return 0;
}
