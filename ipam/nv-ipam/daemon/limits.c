/* The daemons' process limits, raised to what their servers may hold */
#include <errno.h>
#include <sys/resource.h>

#include "ipam/nv-ipam/daemon/limits.h"

long daemon_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t want = rl.rlim_max;

		rl.rlim_cur = want;
		/* A failure leaves the old limit, which still serves most nodes. */
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
			return -errno;
	}
	return rl.rlim_cur == RLIM_INFINITY ? (long)((~0UL) >> 1) : (long)rl.rlim_cur;
}
