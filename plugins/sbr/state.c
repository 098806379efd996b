/* sbr: the rules an ADD made in a pod, kept on the node until its DEL */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/env.h"
#include "common/record/record.h"
#include "common/util/cleanup.h"
#include "common/util/text.h"
#include "plugins/sbr/state.h"

/* The body (common/record writes the first line): "rule <address> <table> <0|1>" lines. */
#define STATE_KIND "sbr"
#define STATE_VERSION 1

int sbr_state_name(const char *container_id, const char *ifname, char *buf, size_t size)
{
	const char *parts[] = { container_id, ifname };

	if (!cni_env_valid_id(container_id) || cni_env_ifname_invalid(ifname))
		return -EINVAL;
	return record_name(parts, ARRAY_SIZE(parts), buf, size);
}

int sbr_state_format(const struct sbr_state_rule *v, size_t n, char **ret)
{
	struct text_buf b = { 0 };
	char addr[IP_PREFIX_STRLEN], line[128];

	for (size_t i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "rule %s %u %d\n",
			 ip_addr_format(&v[i].src, addr, sizeof(addr)), v[i].table, v[i].filled);
		text_buf_puts(&b, line);
	}
	text_buf_putc(&b, '\0');
	if (b.oom) {
		text_buf_free(&b);
		return -ENOMEM;
	}
	*ret = b.data;
	return 0;
}

static bool parse_rule(char *v, struct sbr_state_rule *ret)
{
	char *table = strchr(v, ' '), *flag, *end;
	unsigned long long t;

	if (!table)
		return false;
	*table++ = '\0';
	flag = strchr(table, ' ');
	if (!flag)
		return false;
	*flag++ = '\0';
	if (ip_addr_parse(v, &ret->src) < 0 || !*table || table[0] == '0' ||
	    strspn(table, "0123456789") != strlen(table) || strlen(table) > 10)
		return false;
	t = strtoull(table, &end, 10);
	if (t > UINT32_MAX || (strcmp(flag, "0") != 0 && strcmp(flag, "1") != 0))
		return false;
	ret->table = (uint32_t)t;
	ret->filled = flag[0] == '1';
	return true;
}

int sbr_state_parse(char *p, struct sbr_state_rule **ret, size_t *ret_n)
{
	_cleanup_free_ struct sbr_state_rule *v = NULL;
	size_t lines = 0, n = 0;
	char *line;

	for (const char *q = p; (q = strchr(q, '\n')); q++)
		lines++;
	v = calloc(lines + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	while ((line = record_line(&p, "rule "))) {
		if (!parse_rule(line, &v[n]))
			return -EBADMSG;
		n++;
	}
	if (*p)
		return -EBADMSG;
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

int sbr_state_save(const char *name, const struct sbr_state_rule *v, size_t n)
{
	_cleanup_free_ char *text = NULL;
	int r;

	r = sbr_state_format(v, n, &text);
	if (r < 0)
		return r;
	return record_save(SBR_STATE_DIR, name, STATE_KIND, STATE_VERSION, text);
}

int sbr_state_load(const char *name, struct sbr_state_rule **ret, size_t *ret_n)
{
	_cleanup_free_ char *body = NULL;
	unsigned int version;
	int r;

	r = record_load(SBR_STATE_DIR, name, STATE_KIND, STATE_VERSION, SBR_STATE_MAX_BYTES, &body,
			&version);
	if (r < 0)
		return r;
	return sbr_state_parse(body, ret, ret_n);
}

int sbr_state_remove(const char *name)
{
	return record_remove(SBR_STATE_DIR, name);
}
