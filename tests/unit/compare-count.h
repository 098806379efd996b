/* Comparisons a unit test's code makes, counted by the linker */
#pragma once

/*
 * A test that says what an algorithm costs counts its comparisons, not its time: a count
 * that no load, sanitizer or emulator moves. The test is linked with qsort, qsort_r, strcmp
 * and ip_addr_cmp wrapped (-Wl,--wrap, compare_count_wrap in tests/unit/meson.build): each
 * call of a comparator that qsort or qsort_r are given counts one, and so does each strcmp()
 * and ip_addr_cmp() (what a comparator, a bsearch() that the compiler inlines or a loop
 * that compares on its own call), in the test and in the archives it is linked with. Not
 * thread-safe: for code under test that runs on the test's thread.
 */

/* compare_count_reset() - count from zero again */
void compare_count_reset(void);

/* compare_count() - comparisons since the last compare_count_reset() */
unsigned long compare_count(void);
