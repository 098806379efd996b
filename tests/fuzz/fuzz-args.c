/* libFuzzer target: CNI_ARGS parsing, and the CNI_IFNAME / CNI_CONTAINERID checks */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cni/args.h"
#include "common/cni/env.h"
#include "common/util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ALNUM "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

static const char *const known_macvlan[] = { "MAC", NULL };
static const char *const known_k8s[] = {
	"MAC", "IP", "K8S_POD_NAMESPACE", "K8S_POD_NAME", "K8S_POD_INFRA_CONTAINER_ID",
	"K8S_POD_UID", NULL,
};
static const char *const known_none[] = { NULL };
static const char *const *const known_lists[] = { known_macvlan, known_k8s, known_none };

static void fail(const char *what, const char *s)
{
	fprintf(stderr, "%s: \"%s\"\n", what, s);
	abort();
}

static void check_pairs(const struct cni_args *a, const char *input)
{
	for (size_t i = 0; i < a->n; i++) {
		const char *key = a->pairs[i].key, *value = a->pairs[i].value;
		const char *last = NULL;

		if (!key || !value || !*key || strchr(key, '=') || strchr(key, ';') ||
		    strchr(value, ';'))
			fail("malformed pair parsed from", input);
		/* A later duplicate wins (Multus repeats IgnoreUnknown). */
		for (size_t j = i; j < a->n; j++)
			if (strcmp(a->pairs[j].key, key) == 0)
				last = a->pairs[j].value;
		if (cni_args_get(a, key) != last)
			fail("cni_args_get does not return the last duplicate for", key);
		(void)cni_env_valid_id(key);
		(void)cni_env_valid_id(value);
	}
	{
		const char *ign = cni_args_get(a, "IgnoreUnknown");
		bool want = ign && (strcmp(ign, "1") == 0 || strcasecmp(ign, "true") == 0);

		if (a->ignore_unknown != want)
			fail("ignore_unknown disagrees with the last IgnoreUnknown in", input);
	}
	(void)cni_args_get(a, "MAC");
	(void)cni_args_get(a, "K8S_POD_NAME");
	(void)cni_args_get(a, "");

	for (size_t l = 0; l < sizeof(known_lists) / sizeof(known_lists[0]); l++) {
		struct cni_err err = { 0 };
		int r = cni_args_check_known(a, known_lists[l], &err);

		if (r < 0 && (err.code != CNI_ERR_INVALID_ENV || a->ignore_unknown))
			fail("cni_args_check_known failed oddly on", input);
		if (r == 0 && !a->ignore_unknown && l == 2)
			for (size_t i = 0; i < a->n; i++)
				if (strcmp(a->pairs[i].key, "IgnoreUnknown") != 0)
					fail("unknown key accepted in", input);
	}
}

/* RFC 3629's table of well-formed byte sequences, lead byte by lead byte. */
static bool utf8_ok(const char *str)
{
	const unsigned char *p = (const unsigned char *)str;

	while (*p) {
		unsigned char c = *p, lo = 0x80, hi = 0xbf;
		size_t more;

		if (c < 0x80)
			more = 0;
		else if (c >= 0xc2 && c <= 0xdf)
			more = 1;
		else if (c >= 0xe0 && c <= 0xef)
			more = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			more = 3;
		else
			return false;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
		else if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
		p++;
		for (size_t i = 0; i < more; i++, p++) {
			if (*p < (i ? 0x80 : lo) || *p > (i ? 0xbf : hi))
				return false;
		}
	}
	return true;
}

/* The multi-byte characters Go's unicode.IsSpace takes as space, as encoded. */
static bool go_space_in(const char *str)
{
	static const char *const spaces[] = {
		"\xc2\x85", "\xe1\x9a\x80", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
		"\xe2\x81\x9f", "\xe3\x80\x80",
	};

	for (size_t i = 0; i < sizeof(spaces) / sizeof(spaces[0]); i++)
		if (strstr(str, spaces[i]))
			return true;
	/* U+2000 to U+200A */
	for (const char *p = str; (p = strstr(p, "\xe2\x80")); p++)
		if ((unsigned char)p[2] >= 0x80 && (unsigned char)p[2] <= 0x8a)
			return true;
	return false;
}

/* putenv() with buffers reused across runs, so the environment does not grow. */
static void put_var(size_t slot, const char *name, const char *value)
{
	static char *bufs[8];
	static size_t caps[8];
	size_t need = strlen(name) + 1 + strlen(value) + 1;

	if (need > caps[slot]) {
		char *b = malloc(need * 2);

		if (!b)
			abort();
		snprintf(b, need, "%s=%s", name, value);
		if (putenv(b) != 0)
			abort();
		free(bufs[slot]);
		bufs[slot] = b;
		caps[slot] = need * 2;
		return;
	}
	snprintf(bufs[slot], need, "%s=%s", name, value);
	if (putenv(bufs[slot]) != 0)
		abort();
}

/* The whole environment as a runtime sets it, CNI_ARGS and the names taken from the input. */
static void load_env(const char *s, uint8_t sel)
{
	static const char *const commands[] = { "ADD", "DEL", "CHECK", "VERSION", "STATUS", "GC",
						"add", "" };
	static const char *const vars[] = { "CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME",
					    "CNI_ARGS", "CNI_PATH", "CNI_NETNS_OVERRIDE" };
	const char *cmd = commands[sel % (sizeof(commands) / sizeof(commands[0]))];
	struct cni_env env;
	struct cni_err err = { 0 };
	int r;

	/* setenv() keeps every value it was ever given: the few commands are fine, input is not. */
	setenv("CNI_COMMAND", cmd, 1);
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if (sel & (0x8u << (i % 5)))
			unsetenv(vars[i]);
		else
			put_var(i, vars[i], s);
	}
	r = cni_env_load(&env, &err);
	if (r < 0 && err.code != CNI_ERR_INVALID_ENV)
		fail("cni_env_load failed without code 4 for", s);
	if (!env.command_name || strcmp(env.command_name, cmd) != 0 ||
	    (*cmd && env.command == CNI_CMD_NONE) || (!*cmd && env.command != CNI_CMD_NONE))
		fail("cni_env_load misread CNI_COMMAND", cmd);
	if (env.command != CNI_CMD_UNKNOWN && env.command != CNI_CMD_NONE &&
	    strcmp(cni_command_name(env.command), cmd) != 0)
		fail("cni_command_name disagrees with", cmd);
	if (r == 0 && env.command == CNI_CMD_UNKNOWN)
		fail("cni_env_load accepted the command", cmd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cni_args a = { 0 };
	struct cni_err err = { 0 };
	char *s;
	int r;

	/* The environment hands over a NUL-terminated string. */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	r = cni_args_parse(s, &a, &err);
	{
		/* Non-empty ';'-separated segments are pairs; each needs '=' after a key. */
		size_t segments = 0;
		bool valid = true;

		for (const char *p = s; *p;) {
			size_t len = strcspn(p, ";");
			const char *eq = memchr(p, '=', len);

			if (len) {
				segments++;
				valid &= eq && eq != p;
			}
			p += len + (p[len] == ';');
		}
		if ((r == 0) != valid)
			fail(valid ? "cni_args_parse refused" : "cni_args_parse accepted", s);
		if (r == 0 && a.n != segments)
			fail("cni_args_parse lost or invented pairs in", s);
	}
	if (r < 0) {
		if (err.code != CNI_ERR_INVALID_ENV)
			fail("cni_args_parse failed without code 4 for", s);
	} else {
		check_pairs(&a, s);
		cni_args_free(&a);
		if (a.pairs || a.n)
			abort();
	}

	err = (struct cni_err){ 0 };
	r = cni_env_check_ifname(s, &err);
	if (r < 0 && err.code != CNI_ERR_INVALID_ENV)
		fail("cni_env_check_ifname failed without code 4 for", s);
	/*
	 * 1-15 bytes of UTF-8, not "." or "..", no '/', ':', byte 0xa0 or what Go's
	 * unicode.IsSpace calls space, restated
	 */
	{
		size_t len = strlen(s);
		bool want = len >= 1 && len <= 15 && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
			    !strpbrk(s, "/: \t\n\v\f\r\xa0") && utf8_ok(s) && !go_space_in(s);

		if ((r == 0) != want)
			fail(want ? "cni_env_check_ifname refused" : "cni_env_check_ifname accepted", s);
	}
	/* ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$, restated */
	{
		bool want = s[0] && strchr(ALNUM, s[0]) && !s[strspn(s, ALNUM "_.-")];

		if (cni_env_valid_id(s) != want)
			fail(want ? "cni_env_valid_id refused" : "cni_env_valid_id accepted", s);
	}

	load_env(s, size ? data[size - 1] : 0);

	free(s);
	return 0;
}
