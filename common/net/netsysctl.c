/* sysctl of a netns's network subsystem (/proc/sys/net), read and written from inside it */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/net/netsysctl.h"
#include "common/net/ns.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"

struct sysctl_op {
	const char *rel;
	const char *value; /* NULL: read into buf */
	char *buf;
	size_t len;
};

/*
 * Opened from inside the netns: /proc/sys/net shows the netns of the task
 * that looks it up, whatever /proc was mounted from.
 */
static int sysctl_op_run(void *userdata)
{
	struct sysctl_op *op = userdata;
	_cleanup_close_ int dir = -1, fd = -1;
	size_t off = 0;
	ssize_t n;
	int r;

	dir = open("/proc/sys/net", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
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

int net_sysctl_read(struct net_ns *ns, const char *rel, char *buf, size_t len)
{
	struct sysctl_op op = { .rel = rel, .buf = buf, .len = len };

	if (!rel || !*rel || !buf || len < 2)
		return -EINVAL;
	return net_ns_run(ns, sysctl_op_run, &op);
}

int net_sysctl_write(struct net_ns *ns, const char *rel, const char *value)
{
	struct sysctl_op op = { .rel = rel, .value = value };

	if (!rel || !*rel || !value)
		return -EINVAL;
	return net_ns_run(ns, sysctl_op_run, &op);
}
