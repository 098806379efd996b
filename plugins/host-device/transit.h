/* A device's way between two network namespaces, directly or through a temporary one */
#pragma once

#include <stdbool.h>

struct cni_err;
struct net_ns;

/* A netns a device passes: the handle that talks to it, the descriptor a move targets. */
struct transit_ns {
	struct net_ns *ns;
	int fd;
};

/*
 * A device's way from one netns to another (ADD: host to pod; DEL: pod to
 * host), in one of two plans. Direct (@tmp.fd < 0): one move, and the rename
 * where it cannot touch the host: ADD moves the device under its own name
 * and renames it in the pod; DEL renames it in the pod and moves it. Through
 * a temporary netns: into the temporary netns, renamed there (no name outside
 * can clash), into the target; it costs a second move (the slow part) and is
 * taken only when a link in the way has the name the device crosses with
 * (the pod's in ADD, the pod's original name in DEL).
 *
 * The alias changes with the move into or out of the pod, in the same
 * request, so the device carries its original name at every step, as its name
 * or as its alias, and no kill between two requests leaves the host with a
 * change of ours: ADD changes nothing in the host before the move, and a
 * netns move takes a device down by itself.
 */
struct transit {
	struct transit_ns from, tmp, to;
	const char *from_name;  /* its name where it is */
	const char *to_name;    /* its name where it goes */
	const char *alias;      /* set by the move out of the source */
	const char *old_alias;  /* put back by the undo */
	bool was_up;            /* put back by the undo */
	bool rename_first;      /* rename in the source, then move (DEL) */
	int clash_code;         /* the error when @to_name is taken in the target */
	const char *clash_msg;
};

/**
 * transit_move() - move a device by the direct plan, else through a temporary netns made for it
 * @t: the way (@t->tmp is set here: the plan taken, for transit_undo())
 * @err: @t->clash_code when @t->to_name is taken in the target, 100 otherwise
 *
 * A failed step undoes the steps before it. The caller holds termination
 * signals back around it and around an undo: a plugin stopped there would
 * leave the device half moved, in the pod under its original name or in a
 * temporary netns the kernel destroys, handing a physical device to the host
 * under a name not its own. SIGKILL cannot be held back; DEL mends both cases
 * (see docs/host-device.md). The temporary netns lives as long as @t->tmp's
 * descriptor and handle, which transit_close() releases.
 *
 * Return: 0 on success, negative errno on failure.
 */
int transit_move(struct transit *t, struct cni_err *err);

/**
 * transit_undo() - move the device back as it came, after a later step failed
 * @t: the way transit_move() took
 *
 * Failures are logged: the original error is what the caller reports.
 */
void transit_undo(const struct transit *t);

/**
 * transit_close() - release the temporary netns transit_move() may have made
 * @t: the way
 */
void transit_close(struct transit *t);
