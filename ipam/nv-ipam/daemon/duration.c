/* Durations as Go's flag package takes them ("1m30s", "500ms", "1.5h") */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/nv-ipam/daemon/duration.h"

int go_duration_ms(const char *s, long *ret)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = { { "ns", 1e-6 }, { "us", 1e-3 }, { "\xc2\xb5s", 1e-3 }, { "ms", 1 },
		      { "s", 1000 },  { "m", 60000 }, { "h", 3600000 } };
	double total = 0;
	const char *p = s;

	if (strcmp(s, "0") == 0) {
		*ret = 0;
		return 0;
	}
	if (!*p)
		return -EINVAL;
	while (*p) {
		char *end;
		double n;
		size_t best = 0, k = SIZE_MAX;

		if (!strchr("0123456789.", *p))
			return -EINVAL;
		n = strtod(p, &end);
		if (end == p)
			return -EINVAL;
		p = end;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].unit);

			if (strncmp(p, units[i].unit, l) == 0 && l > best) {
				best = l;
				k = i;
			}
		}
		if (k == SIZE_MAX)
			return -EINVAL;
		total += n * units[k].ms;
		p += best;
	}
	if (total > 366.0 * 24 * 3600000)
		return -EINVAL;
	*ret = (long)(total + 0.5);
	return 0;
}
