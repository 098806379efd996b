/* Cleanup attributes for memory and file descriptors */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/*
 * Generates name(type *p) that calls fn(*p) when *p is not NULL. A use ends
 * with ';' like any declaration (the closing struct declaration takes it), so
 * that tag tools and indenters read it as one line, not as a function body.
 */
#define DEFINE_CLEANUP_FUNC(name, type, fn)                                    \
	static inline void name(type *p)                                       \
	{                                                                      \
		if (*p)                                                        \
			fn(*p);                                                \
	}                                                                      \
	struct cleanup_trailing_semicolon

/* Hands ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)                                                            \
	__extension__({                                                        \
		__typeof__(p) _took = (p);                                     \
		(p) = NULL;                                                    \
		_took;                                                         \
	})

#define TAKE_FD(fd)                                                            \
	__extension__({                                                        \
		int _took = (fd);                                              \
		(fd) = -1;                                                     \
		_took;                                                         \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
