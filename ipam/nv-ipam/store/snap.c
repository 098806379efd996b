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
/* 2 was checked whole at every opening; this build ignores it (the log is read instead). */
#define SNAP_VERSION 3u
#define SNAP_BYTE_ORDER 0x01020304u
/* Small, so that a lookup checks little beside what it reads; the table of checks is 0.4% of the body. */
#define SNAP_BLOCK 1024u

/* Laid out with 8-byte alignment throughout; the checks below keep it so. */
struct snap_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t header_size;
	uint32_t record_size;
	uint32_t block_size;
	uint32_t has_last;
	uint64_t log_id;
	uint64_t log_len;
	uint64_t log_tail_check;
	uint64_t n_lines;
	uint64_t n_records;
	uint64_t n_slots;
	uint64_t strings_len;
	uint64_t body_len;
	struct ip_addr last;
	uint32_t key_len;      /* the pool key's, its NUL not counted */
	uint64_t blocks_check; /* text_checksum64() of the key and the block checksums */
	uint64_t check;        /* text_checksum64() of the header before this member */
};

/*
 * The file: the header, the pool key (with its NUL, padded to 8 bytes: it shares the
 * header's page, which opening a snapshot reads anyway), the block checksums (one uint32_t
 * per SNAP_BLOCK bytes of the body, padded to 8 bytes), the body: records, their addresses (apart, so that a pool's
 * addresses are one sorted array), the tables by key, by pod and by address (slot:
 * record index + 1, 0 when free), the strings.
 */
enum { TABLE_KEY, TABLE_POD, TABLE_IP, TABLE_COUNT };

/* A record's strings are one run in the strings, each ending in its NUL, in this order. */
enum { STR_CONTAINER_ID, STR_IFNAME, STR_NETWORK, STR_POD_NAMESPACE, STR_POD_NAME, STR_POD_UID,
       STR_DEVICE_ID, STR_COUNT };

struct snap_record {
	uint32_t strs;     /* offset of its strings in the strings */
	uint32_t strs_len; /* their length, NULs included */
	int64_t created;
	uint64_t txn;
};

_Static_assert(sizeof(struct snap_header) % 8 == 0, "snapshot header alignment");
_Static_assert(sizeof(struct snap_record) % 8 == 0, "snapshot record alignment");
_Static_assert(sizeof(struct ip_addr) % 4 == 0, "snapshot address alignment");

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* The last steps of splitmix64: every bit of the input moves the slot. */
static uint64_t mix(uint64_t h)
{
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

uint64_t store_snap_key_hash(const char *container_id, const char *ifname)
{
	return mix(str_hash(str_hash(str_hash(0xcbf29ce484222325ULL, container_id), "_"), ifname));
}

static uint64_t pod_hash(const char *pod_uid, const char *ifname)
{
	/* The NUL between them hashed too: no UID and interface run into another pair. */
	return mix(str_hash(str_hash(0xcbf29ce484222325ULL, pod_uid) * 0x100000001b3ULL, ifname));
}

static uint64_t ip_hash(const struct ip_addr *ip)
{
	return text_checksum64(ip->bytes, sizeof(ip->bytes)) ^ (uint64_t)ip->family;
}

/* Byte @i of "<id>_<ifname>". */
static char key_at(const char *id, size_t id_len, const char *ifname, size_t i)
{
	return i < id_len ? id[i] : i == id_len ? '_' : ifname[i - id_len - 1];
}

/* Whether "<a>_<b>" and "<c>_<d>" are one string. */
static bool key_equal(const char *a, const char *b, const char *c, const char *d)
{
	size_t la = strlen(a), lc = strlen(c), len = la + 1 + strlen(b);

	if (len != lc + 1 + strlen(d))
		return false;
	for (size_t i = 0; i < len; i++)
		if (key_at(a, la, b, i) != key_at(c, lc, d, i))
			return false;
	return true;
}

/*
 * A block's checksum, four words at a time in independent lanes (the multiplies of one
 * lane do not wait for another's), its index mixed in: a block moved is a block damaged.
 */
static uint32_t block_checksum(const char *data, size_t len, size_t index)
{
	uint64_t lane[4] = { len, len ^ 1, len ^ 2, index }, w;
	size_t i = 0;

	for (; i + sizeof(lane) <= len; i += sizeof(lane)) {
		for (size_t k = 0; k < 4; k++) {
			memcpy(&w, data + i + 8 * k, 8);
			lane[k] = (lane[k] ^ w) * 0xbf58476d1ce4e5b9ULL;
			lane[k] ^= lane[k] >> 31;
		}
	}
	return (uint32_t)(text_checksum64(lane, sizeof(lane)) ^ text_checksum64(data + i, len - i));
}

/* ---- writing ---- */

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static int cmp_alloc_ip(const void *x, const void *y)
{
	const struct store_alloc *a = *(const struct store_alloc *const *)x;
	const struct store_alloc *b = *(const struct store_alloc *const *)y;

	return ip_addr_cmp(&a->a.ip, &b->a.ip);
}

static void slot_put(char *body, size_t at, size_t n_slots, int table, uint64_t h, uint32_t i)
{
	size_t k = h & (n_slots - 1);
	uint32_t v;

	for (;; k = (k + 1) & (n_slots - 1)) {
		memcpy(&v, body + at + ((size_t)table * n_slots + k) * sizeof(v), sizeof(v));
		if (!v)
			break;
	}
	v = i + 1;
	memcpy(body + at + ((size_t)table * n_slots + k) * sizeof(v), &v, sizeof(v));
}

static const char *str_of(const struct nvipam_alloc *a, int k)
{
	const char *const v[STR_COUNT] = { a->container_id, a->ifname, a->network, a->pod_namespace,
					    a->pod_name, a->pod_uid, a->device_id };

	return v[k] ? v[k] : "";
}

void store_snap_build(struct text_buf *b, const char *key, const struct store_snap_point *at,
		      const struct store_alloc *allocs, size_t n)
{
	struct snap_header h;
	size_t start = b->len, n_records = 0, n_slots, strings_len, body_len, n_blocks, table_len;
	size_t ips_at, slots_at, strings_at, str_off = 0, key_area = round8(strlen(key) + 1);
	_cleanup_free_ const struct store_alloc **sorted = NULL;
	char *file, *body;

	for (size_t i = 0; i < n; i++)
		n_records += allocs[i].a.pool == key;
	/* In address order: a pool read back lists its addresses sorted, as allocation wants them. */
	sorted = malloc((n_records + 1) * sizeof(*sorted));
	if (!sorted) {
		b->oom = true;
		return;
	}
	strings_len = 0;
	for (size_t i = 0, k = 0; i < n; i++) {
		if (allocs[i].a.pool != key)
			continue;
		sorted[k++] = &allocs[i];
		for (int s = 0; s < STR_COUNT; s++)
			strings_len += strlen(str_of(&allocs[i].a, s)) + 1;
	}
	qsort(sorted, n_records, sizeof(*sorted), cmp_alloc_ip);
	for (n_slots = 16; n_slots < 2 * n_records; n_slots *= 2)
		;
	ips_at = n_records * sizeof(struct snap_record);
	slots_at = ips_at + n_records * sizeof(struct ip_addr);
	strings_at = slots_at + TABLE_COUNT * n_slots * sizeof(uint32_t);
	body_len = strings_at + strings_len;
	n_blocks = (body_len + SNAP_BLOCK - 1) / SNAP_BLOCK;
	table_len = round8(n_blocks * sizeof(uint32_t));
	/* Offsets are 32 bits: far beyond what a log holds (STORE_DISK_MAX_BYTES). */
	if (strings_len > UINT32_MAX || strlen(key) > UINT32_MAX) {
		b->oom = true;
		return;
	}
	text_buf_reserve(b, sizeof(h) + key_area + table_len + body_len);
	if (b->oom)
		return;
	file = b->data + start;
	memset(file, 0, sizeof(h) + key_area + table_len + body_len);
	b->len += sizeof(h) + key_area + table_len + body_len;
	memcpy(file + sizeof(h), key, strlen(key) + 1);
	body = file + sizeof(h) + key_area + table_len;
	for (size_t k = 0; k < n_records; k++) {
		const struct nvipam_alloc *a = &sorted[k]->a;
		struct snap_record rec = { .strs = (uint32_t)str_off, .created = (int64_t)a->created,
					   .txn = sorted[k]->txn };

		for (int s = 0; s < STR_COUNT; s++) {
			size_t len = strlen(str_of(a, s)) + 1;

			memcpy(body + strings_at + str_off, str_of(a, s), len);
			str_off += len;
		}
		rec.strs_len = (uint32_t)(str_off - rec.strs);
		memcpy(body + k * sizeof(rec), &rec, sizeof(rec));
		memcpy(body + ips_at + k * sizeof(a->ip), &a->ip, sizeof(a->ip));
		slot_put(body, slots_at, n_slots, TABLE_KEY, store_snap_key_hash(a->container_id, a->ifname),
			 (uint32_t)k);
		/* Without a UID a pod is never looked up: such records would be one long chain. */
		if (a->pod_uid && *a->pod_uid)
			slot_put(body, slots_at, n_slots, TABLE_POD, pod_hash(a->pod_uid, str_of(a, STR_IFNAME)),
				 (uint32_t)k);
		slot_put(body, slots_at, n_slots, TABLE_IP, ip_hash(&a->ip), (uint32_t)k);
	}
	for (size_t i = 0; i < n_blocks; i++) {
		size_t len = body_len - i * SNAP_BLOCK < SNAP_BLOCK ? body_len - i * SNAP_BLOCK : SNAP_BLOCK;
		uint32_t c = block_checksum(body + i * SNAP_BLOCK, len, i);

		memcpy(file + sizeof(h) + key_area + i * sizeof(c), &c, sizeof(c));
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SNAP_MAGIC, sizeof(h.magic));
	h.version = SNAP_VERSION;
	h.byte_order = SNAP_BYTE_ORDER;
	h.header_size = sizeof(h);
	h.record_size = sizeof(struct snap_record);
	h.block_size = SNAP_BLOCK;
	h.has_last = at->has_last;
	h.log_id = at->log_id;
	h.log_len = at->log_len;
	h.log_tail_check = at->log_tail_check;
	h.n_lines = at->n_lines;
	h.n_records = n_records;
	h.n_slots = n_slots;
	h.strings_len = strings_len;
	h.body_len = body_len;
	if (at->has_last)
		h.last = at->last_reserved;
	h.key_len = (uint32_t)strlen(key);
	h.blocks_check = text_checksum64(file + sizeof(h), key_area + n_blocks * sizeof(uint32_t));
	h.check = text_checksum64(&h, offsetof(struct snap_header, check));
	memcpy(file, &h, sizeof(h));
}

/* ---- reading ---- */

static bool block_good(struct store_snap *s, size_t i)
{
	size_t len;

	if (s->checked[i] == 0) {
		len = s->body_len - i * SNAP_BLOCK < SNAP_BLOCK ? s->body_len - i * SNAP_BLOCK : SNAP_BLOCK;
		s->checked[i] = block_checksum(s->body + i * SNAP_BLOCK, len, i) == s->block_checks[i] ? 1 : 2;
		s->n_checked++;
		if (s->checked[i] == 2)
			s->damaged = true;
	}
	return s->checked[i] == 1;
}

/* @len (> 0) bytes of the body at @off, their blocks checked; NULL when one is damaged. */
static const void *body_at(struct store_snap *s, size_t off, size_t len)
{
	for (size_t i = off / SNAP_BLOCK; i <= (off + len - 1) / SNAP_BLOCK; i++)
		if (!block_good(s, i))
			return NULL;
	return s->body + off;
}

int store_snap_parse(const char *data, size_t len, struct store_snap *ret)
{
	const struct snap_header *h = (const void *)data;
	struct store_snap s = { 0 };
	size_t table_len, key_area;
	uint64_t need;

	if (len < sizeof(*h) || memcmp(h->magic, SNAP_MAGIC, sizeof(h->magic)) != 0 ||
	    h->version != SNAP_VERSION || h->byte_order != SNAP_BYTE_ORDER ||
	    h->header_size != sizeof(*h) || h->record_size != sizeof(struct snap_record) ||
	    h->block_size != SNAP_BLOCK || h->check != text_checksum64(h, offsetof(struct snap_header, check)))
		return -EINVAL;
	/* Bounded before multiplying: the sums below cannot overflow. */
	if (h->n_records > len / (sizeof(struct snap_record) + sizeof(struct ip_addr)) ||
	    h->n_slots > len / (TABLE_COUNT * sizeof(uint32_t)) || h->n_slots < 16 ||
	    (h->n_slots & (h->n_slots - 1)) || h->n_slots < 2 * h->n_records ||
	    h->strings_len > len || h->body_len > len || h->key_len == 0 || h->key_len >= len ||
	    (h->has_last && h->last.family != AF_INET && h->last.family != AF_INET6))
		return -EINVAL;
	s.n_records = h->n_records;
	s.ips_at = s.n_records * sizeof(struct snap_record);
	s.slots_at = s.ips_at + s.n_records * sizeof(struct ip_addr);
	s.strings_at = s.slots_at + TABLE_COUNT * h->n_slots * sizeof(uint32_t);
	s.strings_len = h->strings_len;
	s.body_len = h->body_len;
	s.n_blocks = (s.body_len + SNAP_BLOCK - 1) / SNAP_BLOCK;
	table_len = round8(s.n_blocks * sizeof(uint32_t));
	key_area = round8((size_t)h->key_len + 1);
	need = sizeof(*h) + key_area + table_len + (uint64_t)s.body_len;
	if (s.strings_at + s.strings_len != s.body_len || need != len ||
	    h->blocks_check != text_checksum64(data + sizeof(*h), key_area + s.n_blocks * sizeof(uint32_t)))
		return -EINVAL;
	s.key = data + sizeof(*h);
	/* One string, its NUL where the header says. */
	if (memchr(s.key, '\0', key_area) != s.key + h->key_len)
		return -EINVAL;
	s.block_checks = (const void *)(data + sizeof(*h) + key_area);
	s.body = data + sizeof(*h) + key_area + table_len;
	s.mask = h->n_slots - 1;
	s.checked = calloc(s.n_blocks + 1, 1);
	if (!s.checked)
		return -ENOMEM;
	s.at = (struct store_snap_point){
		.log_id = h->log_id,
		.log_len = h->log_len,
		.log_tail_check = h->log_tail_check,
		.n_lines = h->n_lines,
		.has_last = h->has_last,
		.last_reserved = h->last,
	};
	*ret = s;
	return 0;
}

void store_snap_free(struct store_snap *s)
{
	free(s->checked);
	s->checked = NULL;
}

/* Record @i's strings, each checked to end in the run; false when damaged. */
static bool record_strings(struct store_snap *s, size_t i, const char *str[STR_COUNT])
{
	const struct snap_record *rec = body_at(s, i * sizeof(*rec), sizeof(*rec));
	const char *p, *end;

	if (!rec || rec->strs >= s->strings_len || rec->strs_len < STR_COUNT ||
	    rec->strs_len > s->strings_len - rec->strs ||
	    !(p = body_at(s, s->strings_at + rec->strs, rec->strs_len)))
		goto damaged;
	end = p + rec->strs_len;
	for (int k = 0; k < STR_COUNT; k++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul)
			goto damaged;
		str[k] = p;
		p = nul + 1;
	}
	if (p == end)
		return true;
damaged:
	/* Checksums that match over a record that does not: not what this build writes. */
	s->damaged = true;
	return false;
}

int store_snap_ip(struct store_snap *s, size_t i, struct ip_addr *ret)
{
	const struct ip_addr *ip = body_at(s, s->ips_at + i * sizeof(*ip), sizeof(*ip));

	if (!ip || (ip->family != AF_INET && ip->family != AF_INET6)) {
		s->damaged = true;
		return -EIO;
	}
	*ret = *ip;
	return 0;
}

int store_snap_record(struct store_snap *s, size_t i, const char *pool, struct store_alloc *ret)
{
	const struct snap_record *rec = body_at(s, i * sizeof(*rec), sizeof(*rec));
	const char *str[STR_COUNT];
	struct ip_addr ip;

	if (!rec || !record_strings(s, i, str) || store_snap_ip(s, i, &ip) < 0)
		return -EIO;
	ret->txn = rec->txn;
	ret->a = (struct nvipam_alloc){
		.pool = pool,
		.ip = ip,
		.container_id = str[STR_CONTAINER_ID],
		.ifname = str[STR_IFNAME],
		.network = str[STR_NETWORK],
		.pod_namespace = str[STR_POD_NAMESPACE],
		.pod_name = str[STR_POD_NAME],
		.pod_uid = str[STR_POD_UID],
		.device_id = str[STR_DEVICE_ID],
		.created = (time_t)rec->created,
	};
	return 0;
}

/* Slot @k of table @table: the record index + 1, 0 when free; -1 when damaged. */
static long slot_at(struct store_snap *s, int table, size_t k)
{
	const uint32_t *v = body_at(s, s->slots_at + ((size_t)table * (s->mask + 1) + k) * sizeof(*v),
				    sizeof(*v));

	if (!v || *v > s->n_records) {
		s->damaged = true;
		return -1;
	}
	return *v;
}

enum match { MATCH_KEY, MATCH_ATTACHMENT, MATCH_POD };

/* The records of table @table's chain from @h whose strings match @a and @b as @how says. */
static int find_in(struct store_snap *s, int table, uint64_t h, enum match how, const char *a,
		   const char *b, void (*cb)(size_t i, void *ctx), void *ctx)
{
	size_t k = h & s->mask;
	long v;

	/* At most every slot once, whatever the table holds. */
	for (size_t probes = 0; probes <= s->mask; probes++, k = (k + 1) & s->mask) {
		const char *str[STR_COUNT];
		bool hit;

		v = slot_at(s, table, k);
		if (v < 0)
			return -EIO;
		if (v == 0)
			return 0;
		if (!record_strings(s, (size_t)v - 1, str))
			return -EIO;
		if (how == MATCH_POD)
			hit = strcmp(str[STR_POD_UID], a) == 0 && strcmp(str[STR_IFNAME], b) == 0;
		else if (how == MATCH_ATTACHMENT)
			hit = strcmp(str[STR_CONTAINER_ID], a) == 0 && strcmp(str[STR_IFNAME], b) == 0;
		else
			hit = key_equal(str[STR_CONTAINER_ID], str[STR_IFNAME], a, b);
		if (hit)
			cb((size_t)v - 1, ctx);
	}
	return 0;
}

int store_snap_find_key(struct store_snap *s, const char *container_id, const char *ifname,
			void (*cb)(size_t i, void *ctx), void *ctx)
{
	return find_in(s, TABLE_KEY, store_snap_key_hash(container_id, ifname), MATCH_KEY,
		       container_id, ifname, cb, ctx);
}

int store_snap_find_attachment(struct store_snap *s, const char *container_id, const char *ifname,
			       void (*cb)(size_t i, void *ctx), void *ctx)
{
	return find_in(s, TABLE_KEY, store_snap_key_hash(container_id, ifname), MATCH_ATTACHMENT,
		       container_id, ifname, cb, ctx);
}

int store_snap_find_pod(struct store_snap *s, const char *pod_uid, const char *ifname,
			void (*cb)(size_t i, void *ctx), void *ctx)
{
	if (!*pod_uid)
		return 0;
	return find_in(s, TABLE_POD, pod_hash(pod_uid, ifname), MATCH_POD, pod_uid, ifname, cb, ctx);
}

int store_snap_find_ip(struct store_snap *s, const struct ip_addr *ip, long *ret)
{
	size_t k = ip_hash(ip) & s->mask;
	long v;

	*ret = -1;
	for (size_t probes = 0; probes <= s->mask; probes++, k = (k + 1) & s->mask) {
		struct ip_addr have;

		v = slot_at(s, TABLE_IP, k);
		if (v < 0)
			return -EIO;
		if (v == 0)
			return 0;
		if (store_snap_ip(s, (size_t)v - 1, &have) < 0)
			return -EIO;
		if (ip_addr_equal(&have, ip)) {
			*ret = v - 1;
			return 0;
		}
	}
	return 0;
}
