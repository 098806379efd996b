/* sysctl of a netns's network subsystem (/proc/sys/net), read and written from inside it */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/net/netsysctl.h"
#include "common/net/ns.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"

struct sysctl_batch {
	struct net_sysctl_op *ops;
	size_t n;
	size_t done;
};

static int sysctl_op_run(int dir, struct net_sysctl_op *op)
{
	_cleanup_close_ int fd = -1;
	size_t off = 0;
	ssize_t n;
	int r;

	r = file_open_beneath(dir, op->rel, op->value ? O_WRONLY : O_RDONLY, 0, &fd);
	if (r < 0)
		return r;
	if (op->value) {
		/* A sysctl takes its value from one write; a short one would set a prefix. */
		size_t vlen = strlen(op->value);

		do
			n = write(fd, op->value, vlen);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		return (size_t)n == vlen ? 0 : -EIO;
	}
	for (;;) {
		n = read(fd, op->buf + off, op->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		off += (size_t)n;
		if (off == op->len)
			return -ENOBUFS;
	}
	if (off > 0 && op->buf[off - 1] == '\n')
		off--;
	op->buf[off] = '\0';
	return 0;
}

/*
 * Every file opened from inside the netns: /proc/sys/net shows the netns of
 * the task that looks a name up, whatever /proc was mounted from.
 */
static int sysctl_batch_run(void *userdata)
{
	struct sysctl_batch *b = userdata;
	_cleanup_close_ int dir = -1;
	int r;

	dir = open("/proc/sys/net", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	for (; b->done < b->n; b->done++) {
		r = sysctl_op_run(dir, &b->ops[b->done]);
		if (r < 0)
			return r;
	}
	return 0;
}

int net_sysctl_batch(struct net_ns *ns, struct net_sysctl_op *ops, size_t n, size_t *ret_done)
{
	struct sysctl_batch b = { .ops = ops };
	int r = 0;

	/* The ops before a malformed one run, as they would one call at a time. */
	while (b.n < n && ops[b.n].rel && *ops[b.n].rel &&
	       (ops[b.n].value || (ops[b.n].buf && ops[b.n].len >= 2)))
		b.n++;
	if (b.n > 0)
		r = net_ns_run(ns, sysctl_batch_run, &b);
	*ret_done = b.done;
	if (r == 0 && b.n < n)
		r = -EINVAL;
	return r;
}

int net_sysctl_read(struct net_ns *ns, const char *rel, char *buf, size_t len)
{
	struct net_sysctl_op op = { .rel = rel, .buf = buf, .len = len };
	size_t done;

	return net_sysctl_batch(ns, &op, 1, &done);
}

int net_sysctl_write(struct net_ns *ns, const char *rel, const char *value)
{
	struct net_sysctl_op op = { .rel = rel, .value = value };
	size_t done;

	if (!value)
		return -EINVAL;
	return net_sysctl_batch(ns, &op, 1, &done);
}
