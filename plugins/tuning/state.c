/* tuning: what ADD found before it changed a pod's interface, kept on the node until DEL */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/env.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/text.h"
#include "plugins/tuning/state.h"

/*
 * The body, in lines (common/record writes the first): any of "mac <hex:...>",
 * "mtu N", "promisc 0|1", "allmulti 0|1", "txqlen N" in this order, then
 * "sysctl <path> <value as text_escape() writes it>" lines. A path holds
 * no space (tuning_sysctl_key_resolve() refuses it), an escaped value no
 * newline.
 */
#define STATE_KIND "tuning"
#define STATE_VERSION 1

void tuning_state_free(struct tuning_state *s)
{
	free(s->sysctls);
	*s = (struct tuning_state){ 0 };
}

bool tuning_state_empty(const struct tuning_state *s)
{
	return !s->has_mac && !s->has_mtu && !s->has_promisc && !s->has_allmulti && !s->has_txqlen &&
	       !s->n_sysctls;
}

int tuning_state_name(const char *container_id, const char *ifname, char *buf, size_t size)
{
	const char *parts[] = { container_id, ifname };

	if (!cni_env_valid_id(container_id) || cni_env_ifname_invalid(ifname))
		return -EINVAL;
	return record_name(parts, ARRAY_SIZE(parts), buf, size);
}

int tuning_state_format(const struct tuning_state *s, char **ret)
{
	struct text_buf b = { 0 };
	char line[128];

	if (s->has_mac) {
		char mac[3 * HWADDR_MAX];

		text_buf_puts(&b, "mac ");
		text_buf_puts(&b, hwaddr_format(s->mac, s->mac_len, mac, sizeof(mac)));
		text_buf_putc(&b, '\n');
	}
	if (s->has_mtu) {
		snprintf(line, sizeof(line), "mtu %u\n", s->mtu);
		text_buf_puts(&b, line);
	}
	if (s->has_promisc)
		text_buf_puts(&b, s->promisc ? "promisc 1\n" : "promisc 0\n");
	if (s->has_allmulti)
		text_buf_puts(&b, s->allmulti ? "allmulti 1\n" : "allmulti 0\n");
	if (s->has_txqlen) {
		snprintf(line, sizeof(line), "txqlen %" PRIu32 "\n", s->txqlen);
		text_buf_puts(&b, line);
	}
	for (size_t i = 0; i < s->n_sysctls; i++) {
		text_buf_puts(&b, "sysctl ");
		text_buf_puts(&b, s->sysctls[i].path);
		text_buf_putc(&b, ' ');
		text_buf_put_escaped(&b, s->sysctls[i].value, strlen(s->sysctls[i].value));
		text_buf_putc(&b, '\n');
	}
	text_buf_putc(&b, '\0');
	if (b.oom) {
		text_buf_free(&b);
		return -ENOMEM;
	}
	*ret = b.data;
	return 0;
}

static bool parse_uint(const char *v, uint32_t max, uint32_t *ret)
{
	char *end;
	unsigned long long n;

	if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 10)
		return false;
	n = strtoull(v, &end, 10);
	if (n > max)
		return false;
	*ret = (uint32_t)n;
	return true;
}

static bool parse_flag(const char *v, bool *ret)
{
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
		return false;
	*ret = v[0] == '1';
	return true;
}

/* "<path> <escaped value>": the path as a resolved key is, the value as it was read. */
static bool parse_sysctl(char *v, struct tuning_state_sysctl *ret)
{
	char *sp = strchr(v, ' ');
	size_t plen, vlen;

	if (!sp)
		return false;
	plen = (size_t)(sp - v);
	if (plen == 0 || plen >= sizeof(ret->path) || memchr(v, '\0', plen))
		return false;
	for (size_t i = 0; i < plen; i++)
		if ((unsigned char)v[i] < ' ' || v[i] == 0x7f)
			return false;
	if (v[0] == '/' || strstr(v, "..") || strstr(v, "//"))
		return false;
	if (text_unescape(sp + 1, strlen(sp + 1), &vlen) < 0 || vlen >= sizeof(ret->value) ||
	    memchr(sp + 1, '\0', vlen))
		return false;
	memcpy(ret->path, v, plen);
	ret->path[plen] = '\0';
	memcpy(ret->value, sp + 1, vlen);
	ret->value[vlen] = '\0';
	return true;
}

int tuning_state_parse(char *p, struct tuning_state *ret)
{
	struct tuning_state s = { 0 };
	size_t lines = 0;
	uint32_t mtu;
	char *v;

	if ((v = record_line(&p, "mac "))) {
		if (hwaddr_parse(v, s.mac, &s.mac_len) < 0)
			return -EBADMSG;
		s.has_mac = true;
	}
	if ((v = record_line(&p, "mtu "))) {
		if (!parse_uint(v, INT32_MAX, &mtu) || mtu == 0)
			return -EBADMSG;
		s.mtu = mtu;
		s.has_mtu = true;
	}
	if ((v = record_line(&p, "promisc ")) && !(s.has_promisc = parse_flag(v, &s.promisc)))
		return -EBADMSG;
	if ((v = record_line(&p, "allmulti ")) && !(s.has_allmulti = parse_flag(v, &s.allmulti)))
		return -EBADMSG;
	if ((v = record_line(&p, "txqlen ")) && !(s.has_txqlen = parse_uint(v, UINT32_MAX, &s.txqlen)))
		return -EBADMSG;
	for (const char *q = p; (q = strchr(q, '\n')); q++)
		lines++;
	if (lines > TUNING_MAX_SYSCTLS)
		return -EBADMSG;
	if (lines) {
		s.sysctls = calloc(lines, sizeof(*s.sysctls));
		if (!s.sysctls)
			return -ENOMEM;
	}
	while ((v = record_line(&p, "sysctl "))) {
		if (!parse_sysctl(v, &s.sysctls[s.n_sysctls])) {
			tuning_state_free(&s);
			return -EBADMSG;
		}
		s.n_sysctls++;
	}
	if (*p) {
		tuning_state_free(&s);
		return -EBADMSG;
	}
	*ret = s;
	return 0;
}

int tuning_state_save(const char *name, const struct tuning_state *s)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = tuning_state_format(s, &text);
	if (r < 0)
		return r;
	return record_save(TUNING_STATE_DIR, name, STATE_KIND, STATE_VERSION, text);
}

int tuning_state_load(const char *name, struct tuning_state *ret)
{
	_cleanup_free_ char *body = NULL;
	unsigned int version;
	int r;

	r = record_load(TUNING_STATE_DIR, name, STATE_KIND, STATE_VERSION, TUNING_STATE_MAX_BYTES,
			&body, &version);
	if (r < 0)
		return r;
	return tuning_state_parse(body, ret);
}

int tuning_state_remove(const char *name)
{
	return record_remove(TUNING_STATE_DIR, name);
}
