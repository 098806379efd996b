/* Addresses released lately, per pool: what a cooldown keeps from being handed out again */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/file.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/released.h"

/* Past this, the next release rewrites the file without its expired lines. */
#define RELEASED_COMPACT_BYTES (16u << 10)
/* A file larger than this is damage: read as nothing released. */
#define RELEASED_MAX_BYTES (1u << 20)

static void file_name(const struct store_pool_disk *d, char *buf, size_t size)
{
	snprintf(buf, size, "%s.released", d->stem);
}

int store_released_parse(char *data, time_t since, struct ip_addr **ret, size_t *ret_n,
			 struct text_buf *b)
{
	struct ip_addr *v = NULL;
	size_t n = 0, cap = 0;
	char *line, *next;

	*ret_n = 0;
	for (line = data; line && *line; line = next) {
		char ip_text[IP_PREFIX_STRLEN];
		long long t;
		struct ip_addr ip;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%47s %lld", ip_text, &t) != 2 || ip_addr_parse(ip_text, &ip) < 0 ||
		    (time_t)t < since)
			continue;
		if (b) {
			text_buf_puts(b, line);
			text_buf_putc(b, '\n');
		}
		if (!ret)
			continue;
		if (n == cap) {
			struct ip_addr *w = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));

			if (!w) {
				free(v);
				return -ENOMEM;
			}
			v = w;
		}
		v[n++] = ip;
	}
	if (ret)
		*ret = v;
	*ret_n = n;
	return 0;
}

/* The file's lines at or after @since, as text, appended to @b; the lines read to @ret. */
static int read_lines(const struct nvipam_store *s, const struct store_pool_disk *d, time_t since,
		      struct ip_addr **ret, size_t *ret_n, struct text_buf *b)
{
	_cleanup_free_ char *data = NULL;
	char name[STORE_FORMAT_STEM_MAX + 16];
	size_t len = 0;
	int r;

	*ret_n = 0;
	if (s->pool_dir_fd < 0)
		return 0;
	file_name(d, name, sizeof(name));
	r = file_read_at(s->pool_dir_fd, name, RELEASED_MAX_BYTES, &data, &len);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	return store_released_parse(data, since, ret, ret_n, b);
}

int store_released_since(const struct nvipam_store *s, const struct store_pool_disk *d, time_t since,
			 struct ip_addr **ret, size_t *ret_n)
{
	*ret = NULL;
	return read_lines(s, d, since, ret, ret_n, NULL);
}

void store_released_note(struct nvipam_store *s, const struct store_pool_disk *d,
			 const struct ip_addr *ips, size_t n, unsigned int cooldown_s)
{
	char name[STORE_FORMAT_STEM_MAX + 16], ip[IP_PREFIX_STRLEN], num[32];
	struct text_buf b = { 0 };
	time_t now = time(NULL);
	_cleanup_close_ int fd = -1;
	const char *step;
	struct stat st;
	size_t kept;

	if (!n || s->pool_dir_fd < 0)
		return;
	file_name(d, name, sizeof(name));
	for (size_t i = 0; i < n; i++) {
		snprintf(num, sizeof(num), " %lld\n", (long long)now);
		text_buf_puts(&b, ip_addr_format(&ips[i], ip, sizeof(ip)));
		text_buf_puts(&b, num);
	}
	fd = openat(s->pool_dir_fd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= RELEASED_COMPACT_BYTES) {
		struct text_buf all = { 0 };

		/* Only what is still cooling, then the new lines; under the pool's lock. */
		if (read_lines(s, d, now - (time_t)cooldown_s, NULL, &kept, &all) == 0 && !all.oom &&
		    !b.oom) {
			text_buf_add(&all, b.data, b.len);
			if (!all.oom)
				(void)file_write_atomic_at(s->pool_dir_fd, name, all.data, all.len, 0600,
							   &step);
		}
		text_buf_free(&all);
	} else if (fd >= 0 && !b.oom) {
		(void)!write(fd, b.data, b.len);
	}
	text_buf_free(&b);
}
