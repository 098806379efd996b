/* libFuzzer target: host-local's config, CNI_ARGS, ranges and resolv.conf readers */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/result.h"
#include "common/cni/version.h"
#include "common/util/error.h"
#include "common/util/text.h"
#include "ipam/host-local/config.h"
#include "ipam/host-local/dns.h"
#include "ipam/host-local/ip.h"
#include "ipam/host-local/range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walking a set further than this proves nothing more. */
#define WALK_MAX 2048

static void fail(const char *what)
{
	fprintf(stderr, "%s\n", what);
	abort();
}

static void check_text(const struct ip_addr *a)
{
	char text[HL_IP_STRLEN];
	struct ip_addr back;

	if (hl_ip_parse(hl_ip_format(a, text), &back) < 0 || !ip_addr_equal(a, &back))
		fail("an address does not read back from its text");
}

static void check_range(const struct hl_range *r)
{
	if (r->start.family != r->net.family || r->end.family != r->net.family)
		fail("a range across families");
	if (hl_ip_cmp(&r->start, &r->end) > 0)
		fail("a range that ends before it starts");
	if (!hl_range_contains(r, &r->start) || !hl_range_contains(r, &r->end))
		fail("a range that does not hold its ends");
	check_text(&r->start);
	check_text(&r->end);
	check_text(&r->gateway);
}

/* The walk: only the set's addresses, never a gateway, each once, all of them when few. */
static void check_walk(const struct hl_range_set *set)
{
	uint64_t capacity = hl_range_set_capacity(set), n = 0;
	const struct hl_range *r;
	struct ip_addr ip, first = { 0 };
	struct hl_iter it;

	hl_iter_init(&it, set, NULL);
	while (n < WALK_MAX && hl_iter_next(&it, &ip, &r)) {
		if (!hl_range_contains(r, &ip) || hl_range_set_find(set, &ip) == NULL)
			fail("the walk left its set");
		if (ip_addr_equal(&ip, &r->gateway))
			fail("the walk handed out a gateway");
		if (n && ip_addr_equal(&ip, &first))
			fail("the walk came back to its start");
		if (!n)
			first = ip;
		n++;
	}
	if (capacity <= WALK_MAX && n != capacity)
		fail("the walk missed addresses of a small set");
}

static void check_config(const struct cni_conf *conf, const struct hl_config *c)
{
	size_t v4 = 0, v6 = 0;

	if (!c->n_sets || !c->data_dir || !*c->data_dir)
		fail("a loaded config without a set or a dataDir");
	for (size_t i = 0; i < c->n_sets; i++) {
		const struct hl_range_set *set = &c->sets[i];

		if (!set->n)
			fail("an empty set loaded");
		for (size_t k = 0; k < set->n; k++) {
			check_range(&set->ranges[k]);
			if (set->ranges[k].start.family != set->ranges[0].start.family)
				fail("a set of mixed families");
		}
		for (size_t j = i + 1; j < c->n_sets; j++)
			if (hl_range_sets_overlap(set, &c->sets[j]))
				fail("overlapping sets loaded");
		if (set->ranges[0].start.family == AF_INET)
			v4++;
		else
			v6++;
		check_walk(set);
	}
	if ((v4 > 1 || v6 > 1) && cni_version_cmp(conf->cni_version, "0.3.0") < 0)
		fail("several sets of a family accepted below 0.3.0");
	for (size_t i = 0; i < c->n_requested; i++) {
		check_text(&c->requested[i]);
		for (size_t j = i + 1; j < c->n_requested; j++)
			if (ip_addr_equal(&c->requested[i], &c->requested[j]))
				fail("a requested address twice");
	}
}

static void check_dns(const struct cni_dns *d)
{
	const char *const *lists[3] = { (const char *const *)d->nameservers,
					(const char *const *)d->search,
					(const char *const *)d->options };
	const size_t n[3] = { d->n_nameservers, d->n_search, d->n_options };

	for (size_t l = 0; l < 3; l++)
		for (size_t i = 0; i < n[l]; i++)
			if (!*lists[l][i] || !text_utf8_valid(lists[l][i], strlen(lists[l][i])))
				fail("a DNS field empty or not UTF-8");
	if (d->domain && !text_utf8_valid(d->domain, strlen(d->domain)))
		fail("a domain not UTF-8");
}

/* Input: CNI_ARGS, a newline, the network config; the whole input is also read as resolv.conf. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	struct cni_result dns = { 0 };
	struct cni_args args = { 0 };
	struct cni_conf conf = { 0 };
	struct hl_config c = { 0 };
	struct cni_err err = { 0 };
	char *text, *env;
	size_t env_len;
	int r;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (hl_dns_parse(text, size, &dns.dns, &err) >= 0)
		check_dns(&dns.dns);
	else if (err.code == CNI_OK)
		fail("a refused resolv.conf without an error");
	cni_result_free(&dns);
	free(text);
	if (!nl)
		return 0;
	err = (struct cni_err){ 0 };
	env_len = (size_t)(nl - data);
	env = strndup((const char *)data, env_len);
	if (!env || strlen(env) != env_len) {
		free(env);
		return 0;
	}
	r = cni_conf_parse((const char *)nl + 1, size - env_len - 1, &conf, &err);
	if (r >= 0)
		r = cni_args_parse(env, &args, &err);
	if (r >= 0) {
		r = hl_config_load(&conf, &args, &c, &err);
		if (r >= 0)
			check_config(&conf, &c);
		else if (c.sets || c.requested || c.routes)
			fail("a refused load wrote its config");
	}
	if (r < 0 && err.code == CNI_OK)
		fail("a failure without an error");
	hl_config_free(&c);
	cni_args_free(&args);
	cni_conf_free(&conf);
	free(env);
	return 0;
}
