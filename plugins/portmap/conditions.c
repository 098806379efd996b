/* portmap's nftables conditions: the words of conditionsV4/V6 read into rule expressions */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/netfilter/nft-rule.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/ipaddr.h"
#include "plugins/portmap/conditions.h"
#include "plugins/portmap/config.h"

struct words {
	char *text;           /* the conditions joined, cut into words in place */
	char **v;
	size_t n, at;
};

static int split(const struct portmap_conditions *c, struct words *w)
{
	size_t len = 0;
	char *p, *save = NULL;

	for (size_t i = 0; i < c->n; i++)
		len += strlen(c->v[i]) + 1;
	w->text = malloc(len + 1);
	/* A word and its blank take two bytes at least. */
	w->v = calloc(len / 2 + 1, sizeof(*w->v));
	if (!w->text || !w->v)
		return -ENOMEM;
	p = w->text;
	for (size_t i = 0; i < c->n; i++)
		p = stpcpy(stpcpy(p, c->v[i]), " ");
	*p = '\0';
	for (char *s = strtok_r(w->text, " ", &save); s; s = strtok_r(NULL, " ", &save))
		w->v[w->n++] = s;
	return 0;
}

static const char *next(struct words *w)
{
	return w->at < w->n ? w->v[w->at++] : NULL;
}

/* An optional "==" or "!=": whether it negates. */
static bool negation(struct words *w)
{
	if (w->at < w->n && strcmp(w->v[w->at], "==") == 0) {
		w->at++;
		return false;
	}
	if (w->at < w->n && strcmp(w->v[w->at], "!=") == 0) {
		w->at++;
		return true;
	}
	return false;
}

static int refuse(const char *key, const struct words *w, const char *what, struct cni_err *err)
{
	const char *word = w->at > 0 && w->at <= w->n ? w->v[w->at - 1] : "(end)";

	return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -EINVAL,
			   "%s: \"%.64s\" (word %zu): %s; ours reads \"ip|ip6 saddr|daddr [!=] "
			   "ADDRESS\", \"[meta] iifname|oifname [!=] NAME\", \"tcp|udp|sctp "
			   "sport|dport PORT\" (docs/portmap.md)", key, word, w->at, what);
}

static int addr_match(struct nft_rule *r, struct words *w, bool v6, const char *key,
		      struct cni_err *err)
{
	const char *dir = next(w), *text;
	struct ip_prefix p;
	bool neq;
	int ret;

	if (!dir || (strcmp(dir, "saddr") != 0 && strcmp(dir, "daddr") != 0))
		return refuse(key, w, "saddr or daddr expected", err);
	neq = negation(w);
	text = next(w);
	if (!text)
		return refuse(key, w, "an address expected", err);
	if (strchr(text, '/')) {
		ret = ip_prefix_parse(text, &p);
	} else {
		ret = ip_addr_parse(text, &p.addr);
		p.len = (unsigned int)ip_addr_size(&p.addr) * 8;
	}
	if (ret < 0 || (p.addr.family == AF_INET6) != v6 || p.len == 0)
		return refuse(key, w, v6 ? "an IPv6 address or prefix expected" :
					   "an IPv4 address or prefix expected", err);
	ret = nft_match_addr(r, strcmp(dir, "daddr") == 0, &p, neq);
	return ret == -ENOMEM ? cni_err_set(err, CNI_ERR_INTERNAL, ret, "out of memory") : ret;
}

static int ifname_match(struct nft_rule *r, struct words *w, bool out, const char *key,
			struct cni_err *err)
{
	bool neq = negation(w);
	const char *text = next(w);
	char name[64];
	size_t n;

	if (!text)
		return refuse(key, w, "an interface name expected", err);
	n = strlen(text);
	if (n >= 2 && text[0] == '"' && text[n - 1] == '"') {
		text++;
		n -= 2;
	}
	/* A wildcard ("eth*") is a prefix match nft builds otherwise: not read here. */
	if (n == 0 || n > 15 || memchr(text, '*', n) || memchr(text, '"', n) ||
	    memchr(text, '\\', n))
		return refuse(key, w, "an interface name of 1 to 15 characters, no wildcard", err);
	memcpy(name, text, n);
	name[n] = '\0';
	return nft_match_ifname(r, out, name, neq) < 0 ?
		       cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory") : 0;
}

static int port_match(struct nft_rule *r, struct words *w, uint8_t proto, const char *key,
		      struct cni_err *err)
{
	const char *dir = next(w), *text;
	char *end;
	unsigned long port;

	if (!dir || (strcmp(dir, "sport") != 0 && strcmp(dir, "dport") != 0))
		return refuse(key, w, "sport or dport expected", err);
	if (w->at < w->n && strcmp(w->v[w->at], "==") == 0)
		w->at++;
	text = next(w);
	if (!text)
		return refuse(key, w, "a port expected", err);
	port = strtoul(text, &end, 10);
	if (*text < '0' || *text > '9' || *end || port == 0 || port > 65535)
		return refuse(key, w, "a port from 1 to 65535 expected", err);
	return nft_match_port(r, proto, strcmp(dir, "dport") == 0, (uint16_t)port) < 0 ?
		       cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory") : 0;
}

int portmap_nft_conditions(struct nft_rule *r, const struct portmap_conditions *c,
			   const char *key, struct cni_err *err)
{
	bool v6 = nft_rule_family(r) == NFT_FAMILY_IP6;
	struct words w = { 0 };
	const char *word;
	int ret = 0;

	if (!c->v || c->n == 0)
		return 0;
	if (split(c, &w) < 0) {
		free(w.text);
		free(w.v);
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	}
	while (ret >= 0 && (word = next(&w))) {
		if (strcmp(word, v6 ? "ip6" : "ip") == 0)
			ret = addr_match(r, &w, v6, key, err);
		else if (strcmp(word, "meta") == 0 && w.at < w.n &&
			 (strcmp(w.v[w.at], "iifname") == 0 || strcmp(w.v[w.at], "oifname") == 0))
			continue;
		else if (strcmp(word, "iifname") == 0 || strcmp(word, "oifname") == 0)
			ret = ifname_match(r, &w, word[0] == 'o', key, err);
		else if (strcmp(word, "tcp") == 0)
			ret = port_match(r, &w, IPPROTO_TCP, key, err);
		else if (strcmp(word, "udp") == 0)
			ret = port_match(r, &w, IPPROTO_UDP, key, err);
		else if (strcmp(word, "sctp") == 0)
			ret = port_match(r, &w, IPPROTO_SCTP, key, err);
		else
			ret = refuse(key, &w, "not a condition ours reads", err);
	}
	free(w.text);
	free(w.v);
	return ret;
}
