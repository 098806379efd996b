/* CNI_ARGS: "K=V;K=V" pairs */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cni/args.h"
#include "common/util/error.h"

void cni_args_free(struct cni_args *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->pairs[i].key);
		free(a->pairs[i].value);
	}
	free(a->pairs);
	*a = (struct cni_args){ 0 };
}

int cni_args_parse(const char *s, struct cni_args *ret, struct cni_err *err)
{
	struct cni_args a = { 0 };
	const char *p = s;
	size_t cap = 0;

	while (p && *p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);

		if (len > 0) {
			if (!eq || eq == p) {
				cni_args_free(&a);
				return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
						   "CNI_ARGS: invalid pair \"%.*s\": expected KEY=VALUE",
						   (int)len, p);
			}
			if (a.n == cap) {
				size_t ncap = cap ? cap * 2 : 8;
				struct cni_arg *np = realloc(a.pairs, ncap * sizeof(*np));

				if (!np) {
					cni_args_free(&a);
					return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
				}
				a.pairs = np;
				cap = ncap;
			}
			a.pairs[a.n].key = strndup(p, (size_t)(eq - p));
			a.pairs[a.n].value = strndup(eq + 1, len - (size_t)(eq - p) - 1);
			a.n++;
			if (!a.pairs[a.n - 1].key || !a.pairs[a.n - 1].value) {
				cni_args_free(&a);
				return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
			}
		}
		p = end ? end + 1 : NULL;
	}
	{
		const char *ign = cni_args_get(&a, "IgnoreUnknown");

		a.ignore_unknown = ign && (strcmp(ign, "1") == 0 || strcasecmp(ign, "true") == 0);
	}
	*ret = a;
	return 0;
}

const char *cni_args_get(const struct cni_args *a, const char *key)
{
	for (size_t i = a->n; i > 0; i--)
		if (strcmp(a->pairs[i - 1].key, key) == 0)
			return a->pairs[i - 1].value;
	return NULL;
}

int cni_args_check_known(const struct cni_args *a, const char *const *known, struct cni_err *err)
{
	char unknown[512] = "";
	size_t n = 0;

	if (a->ignore_unknown)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		bool ok = strcmp(a->pairs[i].key, "IgnoreUnknown") == 0;

		for (const char *const *k = known; !ok && *k; k++)
			ok = strcmp(a->pairs[i].key, *k) == 0;
		if (!ok && n < sizeof(unknown))
			n += (size_t)snprintf(unknown + n, sizeof(unknown) - n, "%s\"%s=%s\"",
					      n ? " " : "", a->pairs[i].key, a->pairs[i].value);
	}
	if (n)
		return cni_err_set(err, CNI_ERR_INVALID_ENV, -EINVAL,
				   "ARGS: unknown args [%s] (set IgnoreUnknown=1 to ignore them)", unknown);
	return 0;
}
