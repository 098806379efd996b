/* Termination signals held back while a step must not be cut in two */
#pragma once

#include <signal.h>

/**
 * signals_block_termination() - hold SIGTERM, SIGINT and SIGHUP until restored
 * @ret_old: the mask before, for signals_restore()
 *
 * A runtime that times a plugin out sends SIGTERM (or SIGKILL, which nothing
 * holds back); a signal that arrives meanwhile takes effect on the restore.
 */
void signals_block_termination(sigset_t *ret_old);

/**
 * signals_restore() - put back the mask signals_block_termination() saved
 * @old: that mask
 */
void signals_restore(const sigset_t *old);
