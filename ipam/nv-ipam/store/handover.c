/* The store handed over to the reference nv-ipam node daemon in its format, and taken back */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/rfc3339.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/commit.h"
#include "ipam/nv-ipam/store/disk.h"
#include "ipam/nv-ipam/store/gate.h"
#include "ipam/nv-ipam/store/handover.h"
#include "ipam/nv-ipam/store/migrate.h"
#include "ipam/nv-ipam/store/open.h"
#include "ipam/nv-ipam/store/private.h"
/*
 * The interface, store.c's and open.c's: the one other file of store/ that includes it.
 * nvipam_store_adopt() and _handover() are part of it, and they commit and close the store
 * as its callers do: this file is above store.c and open.c.
 */
#include "ipam/nv-ipam/store/store.h"

/* ---- the reference daemon's store file ---- */

struct entry {
	const struct nvipam_alloc *a;
	char *key; /* "<containerID>_<ifName>" */
};

static int cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c = strcmp(a->a->pool, b->a->pool);

	return c ? c : strcmp(a->key, b->key);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/*
 * @s with every byte that is not UTF-8 replaced by U+FFFD (a copy, or @s itself when it
 * is valid; NULL when out of memory). Go's encoder writes such a byte as "\ufffd", its
 * decoder reads that back as U+FFFD, which the encoder then writes as it is: the
 * daemon's checksum is of that second form, so the file must hold it.
 */
static char *go_decoded(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *v;

	if (text_utf8_valid(s, n))
		return (char *)s;
	v = malloc(n * 3 + 1);
	if (!v)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = text_utf8_decode(s + i, n - i, NULL);

		if (len == 0) {
			memcpy(v + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(v + o, s + i, len);
		o += len;
		i += len;
	}
	v[o] = '\0';
	return v;
}

/* A JSON string as the daemon reads it back and writes it again. */
static void put_str(struct text_buf *b, const char *s)
{
	char *v = go_decoded(s);

	if (!v) {
		b->oom = true;
		return;
	}
	text_buf_put_json_str(b, v, TEXT_JSON_GO);
	if (v != s)
		free(v);
}

static void put_member(struct text_buf *b, const char *name, const char *value, bool first)
{
	if (!first)
		text_buf_putc(b, ',');
	text_buf_put_json_str(b, name, TEXT_JSON_GO);
	text_buf_putc(b, ':');
	put_str(b, value);
}

static void put_entry(struct text_buf *b, const struct entry *e)
{
	const struct nvipam_alloc *a = e->a;
	char ip[IP_PREFIX_STRLEN], created[RFC3339_STRLEN];

	put_str(b, e->key);
	text_buf_putc(b, ':');
	text_buf_putc(b, '{');
	put_member(b, "container_id", a->container_id, true);
	put_member(b, "interface_name", a->ifname, false);
	put_member(b, "ip_address", ip_addr_format(&a->ip, ip, sizeof(ip)), false);
	text_buf_puts(b, ",\"metadata\":{");
	put_member(b, "create_time", rfc3339_format(a->created, created), true);
	put_member(b, "pod_uuid", a->pod_uid, false);
	put_member(b, "pod_name", a->pod_name, false);
	put_member(b, "pod_namespace", a->pod_namespace, false);
	put_member(b, "device_id", a->device_id, false);
	/* The pool's range then: the daemon only records it (the CRs are its truth). */
	put_member(b, "pool_config_snapshot", "", false);
	text_buf_puts(b, "}}");
}

/*
 * Entries keyed as the daemon keys them, sorted as Go sorts map keys. The daemon holds
 * one address per attachment and pool; a second one an older store gave keeps its
 * address under a key no DEL names (its pod's going frees it, through the cleaner).
 */
static int entries_sorted(const struct nvipam_store *s, struct entry **ret)
{
	struct entry *v = calloc(s->n_allocs ? s->n_allocs : 1, sizeof(*v));
	char ip[IP_PREFIX_STRLEN];
	bool renamed = false;
	int r = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; r >= 0 && i < s->n_allocs; i++) {
		v[i].a = &s->allocs[i].a;
		char *key;

		if (asprintf(&v[i].key, "%s_%s", s->allocs[i].a.container_id, s->allocs[i].a.ifname) < 0) {
			v[i].key = NULL, r = -ENOMEM;
			continue;
		}
		/* Sorted as written: a key is compared as the daemon reads it. */
		key = go_decoded(v[i].key);
		if (key != v[i].key) {
			free(v[i].key);
			v[i].key = key;
			r = key ? 0 : -ENOMEM;
		}
	}
	if (r >= 0)
		qsort(v, s->n_allocs, sizeof(*v), cmp_entry);
	for (size_t i = 1; r >= 0 && i < s->n_allocs; i++) {
		char *key;

		if (cmp_entry(&v[i - 1], &v[i]) != 0)
			continue;
		if (asprintf(&key, "%s_%s", v[i].key, ip_addr_format(&v[i].a->ip, ip, sizeof(ip))) < 0) {
			r = -ENOMEM;
			break;
		}
		free(v[i].key);
		v[i].key = key;
		renamed = true;
	}
	if (r >= 0 && renamed)
		qsort(v, s->n_allocs, sizeof(*v), cmp_entry);
	if (r < 0) {
		for (size_t i = 0; i < s->n_allocs; i++)
			free(v[i].key);
		free(v);
		return r;
	}
	*ret = v;
	return 0;
}

/* Every pool key, of the records and of the allocations, sorted and once each. */
static int pool_keys(const struct nvipam_store *s, const char ***ret, size_t *ret_n)
{
	const char **v = malloc((s->n_pools + s->n_allocs + 1) * sizeof(*v));
	size_t n = 0, k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_pools; i++)
		v[n++] = s->pools[i].key;
	for (size_t i = 0; i < s->n_allocs; i++)
		v[n++] = s->allocs[i].a.pool;
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || strcmp(v[k - 1], v[i]) != 0)
			v[k++] = v[i];
	*ret = v;
	*ret_n = k;
	return 0;
}

int store_handover_render(const struct nvipam_store *s, struct text_buf *b, uint32_t *ret_sum)
{
	static const char head[] = "{\"version\":1,\"checksum\":";
	_cleanup_free_ const char **keys = NULL;
	struct text_buf body = { 0 };
	struct entry *e = NULL;
	size_t n_keys, j = 0;
	char num[16];
	uint32_t sum;
	int r;

	r = pool_keys(s, &keys, &n_keys);
	if (r >= 0)
		r = entries_sorted(s, &e);
	if (r < 0)
		return r;
	text_buf_puts(&body, ",\"pools\":{");
	for (size_t i = 0; i < n_keys; i++) {
		const struct store_pool *p = NULL;
		char last[IP_PREFIX_STRLEN] = "";
		bool first = true;

		for (size_t k = 0; k < s->n_pools && !p; k++)
			if (strcmp(s->pools[k].key, keys[i]) == 0)
				p = &s->pools[k];
		if (p && p->has_last)
			ip_addr_format(&p->last_reserved, last, sizeof(last));
		if (i)
			text_buf_putc(&body, ',');
		put_str(&body, keys[i]);
		text_buf_puts(&body, ":{");
		put_member(&body, "name", keys[i], true);
		text_buf_puts(&body, ",\"entries\":{");
		for (; j < s->n_allocs && strcmp(e[j].a->pool, keys[i]) == 0; j++) {
			if (!first)
				text_buf_putc(&body, ',');
			put_entry(&body, &e[j]);
			first = false;
		}
		text_buf_putc(&body, '}');
		put_member(&body, "last_pool_config", "", false);
		put_member(&body, "last_reserved_ip", last, false);
		text_buf_putc(&body, '}');
	}
	text_buf_puts(&body, "}}");
	for (size_t i = 0; i < s->n_allocs; i++)
		free(e[i].key);
	free(e);
	if (body.oom) {
		text_buf_free(&body);
		return -ENOMEM;
	}
	/* The daemon's checksum: of the same document with "checksum":0. */
	sum = text_hash32(head, sizeof(head) - 1, TEXT_HASH32_INIT);
	sum = text_hash32("0", 1, sum);
	sum = text_hash32(body.data, body.len, sum);
	snprintf(num, sizeof(num), "%" PRIu32, sum);
	text_buf_puts(b, head);
	text_buf_puts(b, num);
	text_buf_add(b, body.data, body.len);
	text_buf_free(&body);
	*ret_sum = sum;
	return b->oom ? -ENOMEM : 0;
}

/* ---- a reference file written after the takeover ---- */

/* ---- taking the store over and handing it back ---- */

int nvipam_store_adopt(const char *path, unsigned int timeout_ms, enum nvipam_store_adoption *ret,
		       size_t *ret_n, struct cni_err *err)
{
	struct nvipam_store *s = NULL;
	char name[NAME_MAX + 1];
	uint32_t sum;
	bool marked;
	int r;

	r = store_open_owner(path, timeout_ms, &s, err);
	if (r < 0)
		return r;
	marked = store_handover_marker(s, &sum);
	r = store_handover_daemon(s, err);
	if (r >= 0 && s->migrate) {
		*ret = NVIPAM_STORE_MIGRATED;
		r = nvipam_store_commit(s, err);
	} else if (r >= 0 && s->merge) {
		*ret = NVIPAM_STORE_MERGED;
		r = s->dirty ? nvipam_store_commit(s, err) : store_commit_file(s, err);
	} else if (r >= 0) {
		*ret = marked ? NVIPAM_STORE_RESUMED : NVIPAM_STORE_OURS;
		if (marked && !s->has_manifest)
			r = store_commit_file(s, err);
	}
	/* The marker goes last: until then, a kill leaves it and the next start does this again. */
	if (r >= 0 && marked) {
		store_handover_marker_name(s, name, sizeof(name));
		if (unlinkat(s->dir_fd, name, 0) < 0 && errno != ENOENT)
			r = cni_err_set(err, CNI_ERR_IO, -errno, "cannot remove %s" STORE_HANDOVER_SUFFIX
					": %s", s->path, strerror(errno));
		else if (fsync(s->dir_fd) < 0)
			r = cni_err_set(err, CNI_ERR_IO, -errno, "cannot sync the directory of %s: %s",
					s->path, strerror(errno));
	}
	if (r >= 0)
		*ret_n = s->n_allocs;
	nvipam_store_close(s);
	return r;
}

int nvipam_store_handover(const char *path, unsigned int timeout_ms, size_t *ret_n,
			  uint32_t *ret_sum, struct cni_err *err)
{
	struct text_buf doc = { 0 }, mark = { 0 };
	char name[NAME_MAX + 1], now[RFC3339_STRLEN], num[16];
	struct nvipam_store *s = NULL;
	const char *step = "";
	uint32_t sum = 0;
	int r;

	r = store_open_owner(path, timeout_ms, &s, err);
	if (r < 0)
		return r;
	r = store_handover_daemon(s, err);
	/* A late write merged on the way is written first: taken back, the pool logs are read. */
	if (r >= 0 && s->merge)
		r = s->dirty ? nvipam_store_commit(s, err) : store_commit_file(s, err);
	if (r >= 0 && store_handover_render(s, &doc, &sum) < 0)
		r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	if (r >= 0) {
		snprintf(num, sizeof(num), "%" PRIu32, sum);
		text_buf_puts(&mark, "nv-ipam handed this store over to the reference nv-ipam node "
				     "daemon; ipam-node's start or nv-ipam-tool adopt takes it "
				     "back\nchecksum ");
		text_buf_puts(&mark, num);
		text_buf_puts(&mark, "\nat ");
		text_buf_puts(&mark, rfc3339_format(time(NULL), now));
		text_buf_putc(&mark, '\n');
		if (mark.oom)
			r = cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	/* The marker first: from it on nothing allocates, whatever the store file says. */
	if (r >= 0) {
		store_handover_marker_name(s, name, sizeof(name));
		r = file_write_atomic_at(s->dir_fd, name, mark.data, mark.len, 0600, &step);
		if (r < 0)
			cni_err_set(err, CNI_ERR_IO, r, "cannot write %s" STORE_HANDOVER_SUFFIX ": %s: %s",
				    s->path, step, strerror(-r));
	}
	if (r >= 0)
		r = store_disk_write_file(s, doc.data, doc.len, err);
	if (r >= 0) {
		*ret_n = s->n_allocs;
		*ret_sum = sum;
	}
	text_buf_free(&doc);
	text_buf_free(&mark);
	nvipam_store_close(s);
	return r;
}

/* ---- the handover as the operator tool sees it ---- */


