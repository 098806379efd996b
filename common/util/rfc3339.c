/* RFC 3339 times: parsed in any form, written as "YYYY-MM-DDTHH:MM:SSZ" */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/util/rfc3339.h"

static bool take_digits(const char **p, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*ret = v;
	return true;
}

static bool is_leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (timegm() is slow: it normalises). */
static int64_t days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int rfc3339_parse(const char *s, time_t *ret)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	const char *p = s;
	time_t t;

	if (!take_digits(&p, 4, &y) || *p++ != '-' || !take_digits(&p, 2, &mo) || *p++ != '-' ||
	    !take_digits(&p, 2, &d) || *p++ != 'T' || !take_digits(&p, 2, &h) || *p++ != ':' ||
	    !take_digits(&p, 2, &mi) || *p++ != ':' || !take_digits(&p, 2, &sec))
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (!take_digits(&p, 2, &oh) || *p++ != ':' || !take_digits(&p, 2, &om) || oh > 23 ||
		    om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p != '\0' || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] + (mo == 2 && is_leap(y)) || h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	t = (time_t)days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= (time_t)sign * (oh * 3600 + om * 60);
	/* Before the epoch means "unknown" to the callers; none is ever written. */
	*ret = t < 0 ? 0 : t;
	return 0;
}

static void put_digits(char *p, int v, int n)
{
	while (n--) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

const char *rfc3339_format(time_t t, char *out)
{
	int64_t days, secs, z, era, doe, yoe, doy, mp, y, m, d;

	if (t < 0)
		t = 0;
	if (t > RFC3339_MAX)
		t = RFC3339_MAX;
	/* The inverse of days_from_civil(). */
	days = (int64_t)t / 86400;
	secs = (int64_t)t % 86400;
	z = days + 719468;
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	put_digits(out, (int)y, 4);
	out[4] = '-';
	put_digits(out + 5, (int)m, 2);
	out[7] = '-';
	put_digits(out + 8, (int)d, 2);
	out[10] = 'T';
	put_digits(out + 11, (int)(secs / 3600), 2);
	out[13] = ':';
	put_digits(out + 14, (int)(secs / 60 % 60), 2);
	out[16] = ':';
	put_digits(out + 17, (int)(secs % 60), 2);
	out[19] = 'Z';
	out[20] = '\0';
	return out;
}
