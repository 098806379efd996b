/* Termination signals held back while a step must not be cut in two */
#include <signal.h>

#include "common/util/signals.h"

void signals_block_termination(sigset_t *ret_old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	(void)sigprocmask(SIG_BLOCK, &set, ret_old);
}

void signals_restore(const sigset_t *old)
{
	(void)sigprocmask(SIG_SETMASK, old, NULL);
}
