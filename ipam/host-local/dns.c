/* host-local's resolvConf: the DNS of a resolv.conf file, read as upstream reads it */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cni/result.h"
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/text.h"
#include "ipam/host-local/dns.h"
#include "ipam/host-local/gotext.h"

/* Upstream's bufio.Scanner gives up on a longer line. */
#define LINE_MAX_BYTES (64u * 1024u)

static void dns_free(struct cni_dns *d)
{
	cni_result_free(&(struct cni_result){ .dns = *d });
	*d = (struct cni_dns){ 0 };
}

/* A field as Go's JSON encoder writes it: each byte that is not UTF-8 as U+FFFD. */
static char *field_dup(const char *s, size_t n)
{
	char *out = malloc(3 * n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t k = text_utf8_decode(s + i, n - i, NULL);

		if (k) {
			memcpy(o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	*o = '\0';
	return out;
}

static int push(char ***v, size_t *n, const char *s, size_t len)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = field_dup(s, len);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* The fields of one trimmed line into @d. */
static int parse_line(const char *line, struct cni_dns *d)
{
	const char *p = line, *key, *f;
	size_t key_n, n;
	int r = 0;

	if (!*line || line[0] == '#' || line[0] == ';')
		return 0;
	key = hl_next_field(&p, &key_n);
	f = hl_next_field(&p, &n);
	if (!key || !f)
		return 0;
#define IS(word) (key_n == sizeof(word) - 1 && memcmp(key, word, key_n) == 0)
	if (IS("nameserver"))
		return push(&d->nameservers, &d->n_nameservers, f, n);
	if (IS("domain")) {
		char *dom = field_dup(f, n);

		if (!dom)
			return -ENOMEM;
		free(d->domain);
		d->domain = dom;
		return 0;
	}
	if (IS("search")) {
		for (; f && r >= 0; f = hl_next_field(&p, &n))
			r = push(&d->search, &d->n_search, f, n);
		return r;
	}
	if (IS("options")) {
		for (; f && r >= 0; f = hl_next_field(&p, &n))
			r = push(&d->options, &d->n_options, f, n);
		return r;
	}
#undef IS
	return 0;
}

int hl_dns_parse(const char *text, size_t len, struct cni_dns *ret, struct cni_err *err)
{
	struct cni_dns d = { 0 };
	size_t at = 0;

	while (at < len) {
		const char *eol = memchr(text + at, '\n', len - at);
		size_t n = eol ? (size_t)(eol - (text + at)) : len - at, tn;
		_cleanup_free_ char *line = NULL;
		char *t;
		int r;

		if (n > LINE_MAX_BYTES) {
			dns_free(&d);
			return cni_err_set(err, CNI_ERR_INVALID_CONFIG, -E2BIG,
					   "bufio.Scanner: token too long");
		}
		/* bufio.ScanLines drops the "\r" of a "\r\n"; TrimSpace would too. */
		line = malloc(n + 1);
		if (!line) {
			dns_free(&d);
			return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
		}
		/* A NUL byte, which no C string holds, is no UTF-8 here: it becomes U+FFFD. */
		for (size_t i = 0; i < n; i++)
			line[i] = text[at + i] ? text[at + i] : (char)0xff;
		line[n] = '\0';
		t = hl_trim_space(line, n, &tn);
		r = parse_line(t, &d);
		if (r < 0) {
			dns_free(&d);
			return cni_err_set(err, CNI_ERR_INTERNAL, r, "out of memory");
		}
		at += n + (eol ? 1 : 0);
	}
	*ret = d;
	return 0;
}

int hl_dns_load(const char *path, struct cni_dns *ret, struct cni_err *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	size_t len;
	int r;

	r = trust_open_file_follow(TRUST_RESOLV, "resolvConf", path, &fd, err);
	if (r == -ENOENT)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r, "open %.256s: no such file or directory",
				   path);
	if (r < 0)
		return r;
	r = file_read_fd(fd, HL_RESOLV_MAX_BYTES, &text, &len);
	if (r == -EFBIG)
		return cni_err_set(err, CNI_ERR_INVALID_CONFIG, r, "resolvConf %.256s: larger than %u bytes",
				   path, HL_RESOLV_MAX_BYTES);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_IO, r, "resolvConf %.256s: %s", path, strerror(-r));
	return hl_dns_parse(text, len, ret, err);
}
