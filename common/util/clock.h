/* The monotonic clock, in the units callers count deadlines and durations in */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds, microseconds and milliseconds. */
int64_t clock_mono_ns(void);
int64_t clock_mono_us(void);
int64_t clock_mono_ms(void);
