/* A device's way between two network namespaces, directly or through a temporary one */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/net/link.h"
#include "common/net/neterr.h"
#include "common/net/ns.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/log.h"
#include "common/util/nsfd.h"
#include "plugins/host-device/transit.h"

/*
 * One change to a link that is looked up by name in the netns it runs in:
 * indices can change when a link moves between namespaces, names are what
 * each step controls.
 */
enum op_kind {
	OP_UP,
	OP_DOWN,
	OP_MOVE,
	OP_RENAME,
};

struct op {
	enum op_kind kind;
	const char *name;             /* the link's name where the op runs */
	const char *arg;              /* OP_RENAME: new name; OP_MOVE: the alias it gets (NULL: kept) */
	const struct transit_ns *to;  /* OP_MOVE: the target */
};

static int op_run(const struct transit_ns *in, const struct op *o)
{
	struct net_link link;
	int r;

	r = net_link_get_by_name(in->ns, o->name, &link);
	if (r < 0)
		return r;
	switch (o->kind) {
	case OP_UP:
		return net_link_set_up(in->ns, link.ifindex, true);
	case OP_DOWN:
		return net_link_set_up(in->ns, link.ifindex, false);
	case OP_MOVE:
		r = net_link_move(in->ns, link.ifindex, o->to->fd, o->arg);
		/*
		 * Before 5.14 the kernel answers a name taken in the target with
		 * EINVAL (a move without IFLA_IFNAME tried an empty name pattern),
		 * as it answers a device that cannot change netns: the name tells.
		 */
		if (r == -EINVAL && net_link_get_by_name(o->to->ns, o->name, &link) == 0)
			return -EEXIST;
		return r;
	case OP_RENAME:
		if (strcmp(o->name, o->arg) == 0)
			return 0;
		return net_link_set_name(in->ns, link.ifindex, o->arg);
	}
	return -EINVAL;
}

/* An undo step: its failure is logged, the original error is what the caller reports. */
static void run_undo_op(const struct transit_ns *in, struct op o, const char *what)
{
	int r = op_run(in, &o);

	if (r < 0)
		log_error("undo: cannot %s (%s): %s", what, o.name, strerror(-r));
}

#define TRANSIT_STEPS 4

/* What -EEXIST from a step means. */
enum step_eexist {
	EEXIST_FAILS,   /* an error like any other */
	EEXIST_CLASH,   /* @to_name is taken in the target: @clash_code */
	EEXIST_DETOUR,  /* the direct plan is blocked: undo it, go through a temporary netns */
};

/* An op that undoes a step, run in @in; skipped when @what is NULL. */
struct undo_op {
	const struct transit_ns *in;
	struct op o;
	const char *what;
};

/* A step, run in @in, and the ops that undo it once it is done, in their order. */
struct transit_step {
	const struct transit_ns *in;
	struct op o;
	const char *what;       /* the failure message ... */
	const char *subject;    /* ... and the name it names */
	enum step_eexist eexist;
	struct undo_op undo[2];
};

/* Ops for the steps and their undo. */
#define UP_OP(nm) { .kind = OP_UP, .name = (nm) }
#define DOWN_OP(nm) { .kind = OP_DOWN, .name = (nm) }
#define RENAME_OP(from, to) { .kind = OP_RENAME, .name = (from), .arg = (to) }
#define MOVE_OP(nm, target, new_alias) { .kind = OP_MOVE, .name = (nm), .to = (target), .arg = (new_alias) }

/* ADD, direct: into the pod under the host name with the alias, renamed there. */
static size_t plan_add_direct(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.in = &t->from,
		.o = MOVE_OP(t->from_name, &t->to, t->alias),
		.what = "failed to move to the target netns",
		.subject = t->from_name,
		/* The pod has a link with the device's host name. */
		.eexist = EEXIST_DETOUR,
		.undo = {
			{ .in = &t->to, .o = MOVE_OP(t->from_name, &t->from, t->old_alias),
			  .what = "move back" },
			/* It left the host up and comes back to it up. */
			{ .in = &t->from, .o = UP_OP(t->from_name), .what = t->was_up ? "set up" : NULL },
		},
	};
	ret[1] = (struct transit_step){
		.in = &t->to,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		/* CNI_IFNAME is taken in the pod. */
		.eexist = EEXIST_CLASH,
		.undo = {
			/* Renaming needs it down; after the configuration it is up. */
			{ .in = &t->to, .o = DOWN_OP(t->to_name), .what = "set down" },
			{ .in = &t->to, .o = RENAME_OP(t->to_name, t->from_name),
			  .what = "restore the name" },
		},
	};
	return 2;
}

/* ADD, around: into a temporary netns with the alias, renamed there, into the pod. */
static size_t plan_add_detour(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.in = &t->from,
		.o = MOVE_OP(t->from_name, &t->tmp, t->alias),
		.what = "failed to move to a temporary netns",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = {
			{ .in = &t->tmp, .o = MOVE_OP(t->from_name, &t->from, t->old_alias),
			  .what = "move back" },
			{ .in = &t->from, .o = UP_OP(t->from_name), .what = t->was_up ? "set up" : NULL },
		},
	};
	ret[1] = (struct transit_step){
		.in = &t->tmp,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .in = &t->tmp, .o = RENAME_OP(t->to_name, t->from_name),
			    .what = "restore the name" } },
	};
	ret[2] = (struct transit_step){
		.in = &t->tmp,
		.o = MOVE_OP(t->to_name, &t->to, NULL),
		.what = "failed to move out of the temporary netns",
		.subject = t->to_name,
		.eexist = EEXIST_CLASH,
		.undo = {
			{ .in = &t->to, .o = DOWN_OP(t->to_name), .what = "set down" },
			{ .in = &t->to, .o = MOVE_OP(t->to_name, &t->tmp, NULL),
			  .what = "move to the temporary netns" },
		},
	};
	return 3;
}

/* DEL, direct: down and renamed in the pod, into the host with the alias cleared. */
static size_t plan_del_direct(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.in = &t->from,
		.o = DOWN_OP(t->from_name),
		.what = "failed to set down",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .in = &t->from, .o = UP_OP(t->from_name),
			    .what = t->was_up ? "set up" : NULL } },
	};
	ret[1] = (struct transit_step){
		.in = &t->from,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		/* The pod has a link with the original name. */
		.eexist = EEXIST_DETOUR,
		.undo = { { .in = &t->from, .o = RENAME_OP(t->to_name, t->from_name),
			    .what = "restore the name" } },
	};
	ret[2] = (struct transit_step){
		.in = &t->from,
		.o = MOVE_OP(t->to_name, &t->to, t->alias),
		.what = "failed to move to the target netns",
		.subject = t->to_name,
		/* The host has a link with the original name. */
		.eexist = EEXIST_CLASH,
		.undo = { { .in = &t->to, .o = MOVE_OP(t->to_name, &t->from, t->old_alias),
			    .what = "move back" } },
	};
	return 3;
}

/* DEL, around: down in the pod, into a temporary netns, renamed, into the host, alias cleared. */
static size_t plan_del_detour(const struct transit *t, struct transit_step *ret)
{
	ret[0] = (struct transit_step){
		.in = &t->from,
		.o = DOWN_OP(t->from_name),
		.what = "failed to set down",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .in = &t->from, .o = UP_OP(t->from_name),
			    .what = t->was_up ? "set up" : NULL } },
	};
	ret[1] = (struct transit_step){
		.in = &t->from,
		.o = MOVE_OP(t->from_name, &t->tmp, NULL),
		.what = "failed to move to a temporary netns",
		.subject = t->from_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .in = &t->tmp, .o = MOVE_OP(t->from_name, &t->from, NULL),
			    .what = "move back" } },
	};
	ret[2] = (struct transit_step){
		.in = &t->tmp,
		.o = RENAME_OP(t->from_name, t->to_name),
		.what = "failed to rename to",
		.subject = t->to_name,
		.eexist = EEXIST_FAILS,
		.undo = { { .in = &t->tmp, .o = RENAME_OP(t->to_name, t->from_name),
			    .what = "restore the name" } },
	};
	ret[3] = (struct transit_step){
		.in = &t->tmp,
		.o = MOVE_OP(t->to_name, &t->to, t->alias),
		.what = "failed to move out of the temporary netns",
		.subject = t->to_name,
		.eexist = EEXIST_CLASH,
		.undo = { { .in = &t->to, .o = MOVE_OP(t->to_name, &t->tmp, t->old_alias),
			    .what = "move to the temporary netns" } },
	};
	return 4;
}

/* Return: the number of steps. */
static size_t transit_plan(const struct transit *t, struct transit_step ret[TRANSIT_STEPS])
{
	memset(ret, 0, TRANSIT_STEPS * sizeof(*ret));
	if (t->rename_first)
		return t->tmp.fd < 0 ? plan_del_direct(t, ret) : plan_del_detour(t, ret);
	return t->tmp.fd < 0 ? plan_add_direct(t, ret) : plan_add_detour(t, ret);
}

/* Undoes the first @n_done steps of a transit, the last one first. */
static void undo_steps(const struct transit *t, size_t n_done)
{
	struct transit_step steps[TRANSIT_STEPS];
	size_t n = transit_plan(t, steps);

	if (n_done > n)
		n_done = n;
	while (n_done-- > 0)
		for (size_t j = 0; j < ARRAY_SIZE(steps[n_done].undo); j++)
			if (steps[n_done].undo[j].what)
				run_undo_op(steps[n_done].undo[j].in, steps[n_done].undo[j].o,
					    steps[n_done].undo[j].what);
}

/*
 * Runs a transit; a failed step undoes the steps before it.
 *
 * Return: 0 when done; 1 when the direct plan is blocked by a name in the
 * way (undone, @err untouched); else a negative errno, with @err set.
 */
static int transit_run(const struct transit *t, struct cni_err *err)
{
	struct transit_step steps[TRANSIT_STEPS];
	size_t n = transit_plan(t, steps);

	for (size_t i = 0; i < n; i++) {
		int r = op_run(steps[i].in, &steps[i].o);

		if (r >= 0)
			continue;
		if (r == -EEXIST && steps[i].eexist == EEXIST_DETOUR) {
			log_debug("%s \"%s\": a link has that name; through a temporary netns",
				  steps[i].what, steps[i].subject);
			undo_steps(t, i);
			return 1;
		}
		if (r == -EEXIST && steps[i].eexist == EEXIST_CLASH)
			cni_err_set(err, t->clash_code, r, "%s", t->clash_msg);
		else
			net_err_op(err, r, steps[i].what, steps[i].subject);
		undo_steps(t, i);
		return r;
	}
	return 0;
}

int transit_move(struct transit *t, struct cni_err *err)
{
	int r;

	t->tmp = (struct transit_ns){ .fd = -1 };
	r = transit_run(t, err);
	if (r <= 0)
		return r;
	r = nsfd_new(&t->tmp.fd);
	if (r >= 0) {
		r = net_ns_open(t->tmp.fd, &t->tmp.ns);
		if (r < 0)
			transit_close(t);
	}
	if (r < 0)
		return cni_err_set(err, CNI_ERR_KERNEL, r, "cannot create a temporary netns: %s",
				   strerror(-r));
	return transit_run(t, err);
}

void transit_undo(const struct transit *t)
{
	undo_steps(t, TRANSIT_STEPS);
}

void transit_close(struct transit *t)
{
	net_ns_close(t->tmp.ns);
	if (t->tmp.fd >= 0)
		close(t->tmp.fd);
	t->tmp = (struct transit_ns){ .fd = -1 };
}
