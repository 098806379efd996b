/* Comparisons a unit test's code makes, counted by the linker */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/util/ipaddr.h"
#include "tests/unit/compare-count.h"

static unsigned long compares;

void compare_count_reset(void)
{
	compares = 0;
}

unsigned long compare_count(void)
{
	return compares;
}

/*
 * The linker sends every call of the code under test here (__wrap_*), and these on to libc
 * and common/util (__real_*).
 */
void __real_qsort_r(void *base, size_t n, size_t size,
		    int (*cmp)(const void *, const void *, void *), void *arg);
int __real_strcmp(const char *a, const char *b);
int __real_ip_addr_cmp(const struct ip_addr *a, const struct ip_addr *b);
void __wrap_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
void __wrap_qsort_r(void *base, size_t n, size_t size,
		    int (*cmp)(const void *, const void *, void *), void *arg);
int __wrap_strcmp(const char *a, const char *b);
int __wrap_ip_addr_cmp(const struct ip_addr *a, const struct ip_addr *b);

/* A comparator with its argument, passed through qsort_r to the counting one. */
struct cmp_call {
	int (*cmp)(const void *, const void *);
	int (*cmp_r)(const void *, const void *, void *);
	void *arg;
};

static int counted(const void *a, const void *b, void *p)
{
	const struct cmp_call *c = p;

	compares++;
	return c->cmp ? c->cmp(a, b) : c->cmp_r(a, b, c->arg);
}

void __wrap_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	struct cmp_call c = { .cmp = cmp };

	__real_qsort_r(base, n, size, counted, &c);
}

void __wrap_qsort_r(void *base, size_t n, size_t size,
		    int (*cmp)(const void *, const void *, void *), void *arg)
{
	struct cmp_call c = { .cmp_r = cmp, .arg = arg };

	__real_qsort_r(base, n, size, counted, &c);
}

int __wrap_strcmp(const char *a, const char *b)
{
	compares++;
	return __real_strcmp(a, b);
}

int __wrap_ip_addr_cmp(const struct ip_addr *a, const struct ip_addr *b)
{
	compares++;
	return __real_ip_addr_cmp(a, b);
}
