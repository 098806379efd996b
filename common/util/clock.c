/* The monotonic clock, in the units callers count deadlines and durations in */
#include <time.h>

#include "common/util/clock.h"

int64_t clock_mono_ns(void)
{
	struct timespec ts;

	/* Cannot fail for CLOCK_MONOTONIC with a valid pointer. */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t clock_mono_us(void)
{
	return clock_mono_ns() / 1000;
}

int64_t clock_mono_ms(void)
{
	return clock_mono_ns() / 1000000;
}
