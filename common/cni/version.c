/* CNI spec versions this suite speaks */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/version.h"
#include "common/util/error.h"

const char *const cni_versions[] = {
	"0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0",
};
const size_t cni_versions_count = sizeof(cni_versions) / sizeof(cni_versions[0]);

bool cni_version_supported(const char *v)
{
	for (size_t i = 0; v && i < cni_versions_count; i++)
		if (strcmp(v, cni_versions[i]) == 0)
			return true;
	return false;
}

int cni_version_cmp(const char *a, const char *b)
{
	for (int i = 0; i < 3; i++) {
		char *ea, *eb;
		long x = strtol(a, &ea, 10);
		long y = strtol(b, &eb, 10);

		if (x != y)
			return x < y ? -1 : 1;
		if (*ea != '.' || *eb != '.')
			return 0;
		a = ea + 1;
		b = eb + 1;
	}
	return 0;
}

const char *cni_version_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	n += (size_t)snprintf(buf + n, len - n, "[");
	for (size_t i = 0; i < cni_versions_count && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s\"%s\"", i ? "," : "", cni_versions[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
	return buf;
}

int cni_version_check_families(const char *version, size_t n_v4, size_t n_v6, struct cni_err *err)
{
	if ((n_v4 > 1 || n_v6 > 1) && cni_version_cmp(version, "0.3.0") < 0)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "CNI version %s does not support more than 1 address per family",
				   version);
	return 0;
}
