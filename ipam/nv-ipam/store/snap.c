/* The pool snapshot: a pool's allocations at a point of its log, read instead of the log's head */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/util/cleanup.h"
#include "common/util/text.h"
#include "ipam/nv-ipam/store/private.h"
#include "ipam/nv-ipam/store/snap.h"

#define SNAP_MAGIC "nvipsnap"
#define SNAP_VERSION 2u
#define SNAP_BYTE_ORDER 0x01020304u

/* Laid out with 8-byte alignment throughout; the checks below keep it so. */
struct snap_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t header_size;
	uint32_t record_size;
	uint64_t log_id;
	uint64_t log_len;
	uint64_t log_tail_check;
	uint64_t n_lines;
	uint64_t n_records;
	uint64_t n_slots;
	uint64_t strings_len;
	uint32_t key;      /* offset in the strings */
	uint32_t has_last;
	struct ip_addr last;
	uint32_t pad;
	uint64_t body_check; /* body_checksum() of everything after the header */
	uint64_t check;      /* text_checksum64() of the header before this member */
};

enum { STR_CONTAINER_ID, STR_IFNAME, STR_NETWORK, STR_POD_NAMESPACE, STR_POD_NAME, STR_POD_UID,
       STR_DEVICE_ID, STR_COUNT };

/* The address of record i is ips[i]: kept apart, so that a pool's addresses are one sorted array. */
struct snap_record {
	uint32_t str[STR_COUNT]; /* offsets in the strings */
	uint32_t pad;
	int64_t created;
	uint64_t txn;
};

_Static_assert(sizeof(struct snap_header) % 8 == 0, "snapshot header alignment");
_Static_assert(sizeof(struct snap_record) % 8 == 0, "snapshot record alignment");
_Static_assert(sizeof(struct ip_addr) % 4 == 0, "snapshot address alignment");

uint64_t store_snap_attachment_hash(const char *container_id, const char *ifname)
{
	return text_checksum64(container_id, strlen(container_id)) ^
	       (text_checksum64(ifname, strlen(ifname)) * 31);
}

static uint64_t ip_hash(const struct ip_addr *ip)
{
	return text_checksum64(ip->bytes, sizeof(ip->bytes)) ^ (uint64_t)ip->family;
}

/*
 * The body's checksum, four words at a time in independent lanes: the multiplies of one
 * lane do not wait for another's. A body is megabytes at 10000 allocations, checked on
 * every opening of the pool; text_checksum64()'s one lane made that 0.6 ms.
 */
static uint64_t body_checksum(const char *data, size_t len)
{
	uint64_t lane[4] = { len, len ^ 1, len ^ 2, len ^ 3 }, w;
	size_t i = 0;

	for (; i + sizeof(lane) <= len; i += sizeof(lane)) {
		for (size_t k = 0; k < 4; k++) {
			memcpy(&w, data + i + 8 * k, 8);
			lane[k] = (lane[k] ^ w) * 0xbf58476d1ce4e5b9ULL;
			lane[k] ^= lane[k] >> 31;
		}
	}
	return text_checksum64(lane, sizeof(lane)) ^ text_checksum64(data + i, len - i);
}

/* Append @s with its NUL; its offset in the strings (which start at @base). */
static uint32_t put_str(struct text_buf *b, size_t base, const char *s)
{
	uint32_t off = (uint32_t)(b->len - base);

	text_buf_add(b, s ? s : "", (s ? strlen(s) : 0) + 1);
	return off;
}

static void slot_put(uint32_t *slots, size_t mask, uint64_t h, uint32_t i)
{
	size_t k = h & mask;

	while (slots[k])
		k = (k + 1) & mask;
	slots[k] = i + 1;
}

static int cmp_alloc_ip(const void *x, const void *y)
{
	const struct store_alloc *a = *(const struct store_alloc *const *)x;
	const struct store_alloc *b = *(const struct store_alloc *const *)y;

	return ip_addr_cmp(&a->a.ip, &b->a.ip);
}

void store_snap_build(struct text_buf *b, const char *key, const struct store_snap_point *at,
		      const struct store_alloc *allocs, size_t n)
{
	struct snap_header h = {
		.version = SNAP_VERSION,
		.byte_order = SNAP_BYTE_ORDER,
		.header_size = sizeof(struct snap_header),
		.record_size = sizeof(struct snap_record),
		.log_id = at->log_id,
		.log_len = at->log_len,
		.log_tail_check = at->log_tail_check,
		.n_lines = at->n_lines,
		.has_last = at->has_last,
		.last = at->has_last ? at->last_reserved : (struct ip_addr){ 0 },
	};
	size_t start = b->len, n_records = 0, ips_at, slots_at, strings_at;
	_cleanup_free_ const struct store_alloc **sorted = NULL;
	uint32_t *by_attachment, *by_ip;

	memcpy(h.magic, SNAP_MAGIC, sizeof(h.magic));
	for (size_t i = 0; i < n; i++)
		n_records += allocs[i].a.pool == key;
	/* In address order: a pool read back lists its addresses sorted, as allocation wants them. */
	sorted = malloc((n_records + 1) * sizeof(*sorted));
	if (!sorted) {
		b->oom = true;
		return;
	}
	for (size_t i = 0, k = 0; i < n; i++)
		if (allocs[i].a.pool == key)
			sorted[k++] = &allocs[i];
	qsort(sorted, n_records, sizeof(*sorted), cmp_alloc_ip);
	for (h.n_slots = 16; h.n_slots < 2 * n_records; h.n_slots *= 2)
		;
	h.n_records = n_records;
	/* The header goes in last, once the strings' length is known. */
	text_buf_add(b, &h, sizeof(h));
	text_buf_reserve(b, n_records * (sizeof(struct snap_record) + sizeof(struct ip_addr)) +
			    2 * h.n_slots * sizeof(uint32_t));
	if (b->oom)
		return;
	b->len += n_records * sizeof(struct snap_record);
	ips_at = b->len;
	b->len += n_records * sizeof(struct ip_addr);
	slots_at = b->len;
	memset(b->data + b->len, 0, 2 * h.n_slots * sizeof(uint32_t));
	b->len += 2 * h.n_slots * sizeof(uint32_t);
	strings_at = b->len;
	h.key = put_str(b, strings_at, key);
	for (size_t k = 0; k < n_records && !b->oom; k++) {
		const struct nvipam_alloc *a = &sorted[k]->a;
		struct snap_record rec = { .created = (int64_t)a->created, .txn = sorted[k]->txn };

		rec.str[STR_CONTAINER_ID] = put_str(b, strings_at, a->container_id);
		rec.str[STR_IFNAME] = put_str(b, strings_at, a->ifname);
		rec.str[STR_NETWORK] = put_str(b, strings_at, a->network);
		rec.str[STR_POD_NAMESPACE] = put_str(b, strings_at, a->pod_namespace);
		rec.str[STR_POD_NAME] = put_str(b, strings_at, a->pod_name);
		rec.str[STR_POD_UID] = put_str(b, strings_at, a->pod_uid);
		rec.str[STR_DEVICE_ID] = put_str(b, strings_at, a->device_id);
		if (b->oom)
			return;
		memcpy(b->data + start + sizeof(h) + k * sizeof(rec), &rec, sizeof(rec));
		memcpy(b->data + ips_at + k * sizeof(a->ip), &a->ip, sizeof(a->ip));
		by_attachment = (uint32_t *)(void *)(b->data + slots_at);
		by_ip = by_attachment + h.n_slots;
		slot_put(by_attachment, h.n_slots - 1, store_snap_attachment_hash(a->container_id, a->ifname),
			 (uint32_t)k);
		slot_put(by_ip, h.n_slots - 1, ip_hash(&a->ip), (uint32_t)k);
	}
	if (b->oom)
		return;
	h.strings_len = b->len - strings_at;
	h.body_check = body_checksum(b->data + start + sizeof(h), b->len - start - sizeof(h));
	h.check = text_checksum64(&h, offsetof(struct snap_header, check));
	memcpy(b->data + start, &h, sizeof(h));
}

int store_snap_parse(const char *data, size_t len, struct store_snap *ret)
{
	const struct snap_header *h = (const void *)data;
	const struct snap_record *rec;
	const struct ip_addr *ips;
	const uint32_t *slots;
	const char *strings;
	uint64_t need;

	if (len < sizeof(*h) || memcmp(h->magic, SNAP_MAGIC, sizeof(h->magic)) != 0 ||
	    h->version != SNAP_VERSION || h->byte_order != SNAP_BYTE_ORDER ||
	    h->header_size != sizeof(*h) || h->record_size != sizeof(*rec) ||
	    h->check != text_checksum64(h, offsetof(struct snap_header, check)))
		return -EINVAL;
	/* Bounded before multiplying: the sum below cannot overflow. */
	if (h->n_records > len / (sizeof(*rec) + sizeof(*ips)) || h->n_slots > len / (2 * sizeof(*slots)) ||
	    h->n_slots < 16 || (h->n_slots & (h->n_slots - 1)) || h->n_slots < 2 * h->n_records ||
	    h->strings_len > len || h->strings_len == 0)
		return -EINVAL;
	need = sizeof(*h) + h->n_records * (sizeof(*rec) + sizeof(*ips)) +
	       2 * h->n_slots * sizeof(*slots) + h->strings_len;
	/*
	 * The body is checked whole: a table or an address order damaged on disk would
	 * hide a held address from the allocator, which trusts both.
	 */
	if (need != len || h->body_check != body_checksum(data + sizeof(*h), len - sizeof(*h)))
		return -EINVAL;
	rec = (const void *)(data + sizeof(*h));
	ips = (const void *)(rec + h->n_records);
	slots = (const void *)(ips + h->n_records);
	strings = (const char *)(slots + 2 * h->n_slots);
	/* Every string ends before the end: any offset below the length reads a C string. */
	if (strings[h->strings_len - 1] != '\0' || h->key >= h->strings_len || !strings[h->key] ||
	    (h->has_last && h->last.family != AF_INET && h->last.family != AF_INET6))
		return -EINVAL;
	for (size_t i = 0; i < h->n_records; i++)
		for (int k = 0; k < STR_COUNT; k++)
			if (rec[i].str[k] >= h->strings_len)
				return -EINVAL;
	*ret = (struct store_snap){
		.at = {
			.log_id = h->log_id,
			.log_len = h->log_len,
			.log_tail_check = h->log_tail_check,
			.n_lines = h->n_lines,
			.has_last = h->has_last,
			.last_reserved = h->last,
		},
		.key = strings + h->key,
		.n_records = h->n_records,
		.records = rec,
		.ips = ips,
		.by_attachment = slots,
		.by_ip = slots + h->n_slots,
		.mask = h->n_slots - 1,
		.strings = strings,
		.strings_len = h->strings_len,
	};
	return 0;
}

void store_snap_record(const struct store_snap *s, size_t i, const char *pool,
		       struct store_alloc *ret)
{
	const struct snap_record *rec = (const struct snap_record *)s->records + i;
	const char *str = s->strings;

	ret->txn = rec->txn;
	ret->a = (struct nvipam_alloc){
		.pool = pool,
		.ip = s->ips[i],
		.container_id = str + rec->str[STR_CONTAINER_ID],
		.ifname = str + rec->str[STR_IFNAME],
		.network = str + rec->str[STR_NETWORK],
		.pod_namespace = str + rec->str[STR_POD_NAMESPACE],
		.pod_name = str + rec->str[STR_POD_NAME],
		.pod_uid = str + rec->str[STR_POD_UID],
		.device_id = str + rec->str[STR_DEVICE_ID],
		.created = (time_t)rec->created,
	};
}

/* A slot's record, or -1 for a free slot or one that points nowhere (a damaged table). */
static long slot_record(const struct store_snap *s, const uint32_t *slots, size_t k)
{
	return slots[k] && slots[k] <= s->n_records ? (long)slots[k] - 1 : -1;
}

void store_snap_find_attachment(const struct store_snap *s, const char *container_id,
				const char *ifname, void (*cb)(size_t i, void *ctx), void *ctx)
{
	const struct snap_record *rec = s->records;
	size_t k = store_snap_attachment_hash(container_id, ifname) & s->mask;
	long i;

	/* At most every slot once, whatever the table holds. */
	for (size_t probes = 0; probes <= s->mask && (i = slot_record(s, s->by_attachment, k)) >= 0;
	     probes++, k = (k + 1) & s->mask) {
		if (strcmp(s->strings + rec[i].str[STR_CONTAINER_ID], container_id) == 0 &&
		    strcmp(s->strings + rec[i].str[STR_IFNAME], ifname) == 0)
			cb((size_t)i, ctx);
	}
}

long store_snap_find_ip(const struct store_snap *s, const struct ip_addr *ip)
{
	size_t k = ip_hash(ip) & s->mask;
	long i;

	for (size_t probes = 0; probes <= s->mask && (i = slot_record(s, s->by_ip, k)) >= 0;
	     probes++, k = (k + 1) & s->mask)
		if (ip_addr_equal(&s->ips[i], ip))
			return i;
	return -1;
}
