/* tuning: a sysctl key of the config, resolved to a file below /proc/sys/net */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/util/error.h"
#include "plugins/tuning/sysctl-key.h"

#define KEY_HINT "a key names a file below /proc/sys/net, e.g. net.ipv4.conf.IFNAME.arp_ignore"

static int key_err(struct cni_err *err, const char *key, const char *why)
{
	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "invalid net sysctl key \"%.128s\": %s; " KEY_HINT, key, why);
}

/* The component after "conf" or "neigh" is an interface ("all" and "default" are not). */
static enum tuning_key_scope scope_of(char *path, const char *ifname)
{
	enum tuning_key_scope scope = TUNING_KEY_NETNS;
	const char *prev = "";

	for (char *save = NULL, *c = strtok_r(path, "/", &save); c;
	     prev = c, c = strtok_r(NULL, "/", &save)) {
		if (strcmp(prev, "conf") != 0 && strcmp(prev, "neigh") != 0)
			continue;
		if (strcmp(c, ifname) == 0)
			return TUNING_KEY_OWN;
		if (strcmp(c, "all") != 0 && strcmp(c, "default") != 0)
			scope = TUNING_KEY_OTHER;
	}
	return scope;
}

int tuning_sysctl_key_resolve(const char *key, const char *ifname, char *buf, size_t size,
			      enum tuning_key_scope *ret_scope, struct cni_err *err)
{
	char path[TUNING_SYSCTL_PATH_MAX], copy[TUNING_SYSCTL_PATH_MAX];
	size_t klen = strlen(key), ilen = strlen(ifname), n = 0;
	const char *sub, *c;
	int parts = 0;

	if (klen == 0)
		return key_err(err, key, "empty");
	if (klen >= sizeof(path))
		return key_err(err, key, "too long");
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		if (*p <= ' ' || *p == 0x7f)
			return key_err(err, key, "holds a space or a control character");
	for (size_t i = 0; i <= klen; i++)
		path[i] = key[i] == '.' ? '/' : key[i];
	/* After the dots are separators, so an interface's own dots ("eth0.100") stay. */
	sub = strstr(path, "IFNAME");
	if (sub) {
		size_t at = (size_t)(sub - path);

		if (klen - 6 + ilen >= sizeof(path))
			return key_err(err, key, "too long");
		memmove(path + at + ilen, path + at + 6, klen - at - 6 + 1);
		memcpy(path + at, ifname, ilen);
	}
	/* Every '.' became a separator: ".." in a key shows here as an empty component. */
	for (c = path;; c++) {
		size_t len = strcspn(c, "/");

		if (len == 0)
			return key_err(err, key, "an empty component (\"..\", or a leading, doubled or "
					    "trailing separator)");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return key_err(err, key, "a \".\" or \"..\" component");
		parts++;
		c += len;
		if (!*c)
			break;
	}
	if (strncmp(path, "net/", 4) != 0)
		return key_err(err, key, "not below net (only network sysctls may be set)");
	if (parts < 3)
		return key_err(err, key, "names a directory, not a sysctl");
	n = strlen(path + 4);
	if (n >= size)
		return key_err(err, key, "too long");
	memcpy(buf, path + 4, n + 1);
	memcpy(copy, path, sizeof(copy));
	*ret_scope = scope_of(copy, ifname);
	return 0;
}
