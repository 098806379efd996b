/* tuning: the node's sysctl allowlist (/etc/cni/tuning/allowlist.conf), as upstream reads it */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/conf-map.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "plugins/tuning/allowlist.h"

struct allowlist {
	regex_t *re;
	size_t n;
};

static void allowlist_free(struct allowlist *a)
{
	for (size_t i = 0; i < a->n; i++)
		regfree(&a->re[i]);
	free(a->re);
}

/* One pattern per line, blanks around it and blank lines ignored. */
static int allowlist_parse(const char *path, char *text, struct allowlist *a, struct cni_err *err)
{
	size_t lines = 1, lineno = 0;

	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	a->re = calloc(lines, sizeof(*a->re));
	if (!a->re)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	for (char *line = text, *next; line; line = next) {
		char *end;

		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (isspace((unsigned char)*line))
			line++;
		end = line + strlen(line);
		while (end > line && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*line)
			continue;
		if (regcomp(&a->re[a->n], line, REG_EXTENDED | REG_NOSUB) != 0)
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
					   "sysctl allowlist %s, line %zu: not a valid extended regular "
					   "expression: \"%.128s\"", path, lineno, line);
		a->n++;
	}
	return 0;
}

int tuning_allowlist_check(const char *path, const struct cni_conf_pair *pairs, size_t n,
			   struct cni_err *err)
{
	_cleanup_free_ char *text = NULL;
	struct allowlist a = { 0 };
	size_t len;
	int r;

	if (n == 0)
		return 0;
	r = file_read(path, TUNING_ALLOWLIST_MAX_BYTES, &text, &len);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "cannot read the sysctl allowlist %s: %s", path,
				   strerror(-r));
	if (strlen(text) != len)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
				   "sysctl allowlist %s holds a NUL byte", path);
	r = allowlist_parse(path, text, &a, err);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		bool ok = false;

		for (size_t j = 0; j < a.n && !ok; j++)
			ok = regexec(&a.re[j], pairs[i].key, 0, NULL, 0) == 0;
		if (!ok)
			r = cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EPERM,
					"Sysctl %.128s is not allowed: no pattern of the node's allowlist "
					"%s matches it (%zu patterns)", pairs[i].key, path, a.n);
	}
	allowlist_free(&a);
	return r;
}
