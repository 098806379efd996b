/* The daemons' command line: pflag's spelling over a table of {name, kind, offset, default, help} */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/nv-ipam/daemon/duration.h"
#include "ipam/nv-ipam/daemon/flags.h"

static int set(const struct daemon_cmdline *c, const struct daemon_flag *f, const char *val,
	       void *flags, FILE *err)
{
	/* The field is reached by its offset; memcpy() stores it whatever the
	 * compiler knows of that address's alignment (clang's -Wcast-align). */
	char *field = (char *)flags + f->off;
	char *end;
	bool b;
	long n;
	int k;

	switch (f->kind) {
	case DF_STR:
		memcpy(field, &val, sizeof(val));
		return 0;
	case DF_INT:
		errno = 0;
		n = strtol(val, &end, 10);
		if (!*val || *end || errno || n < 0 || n > INT_MAX)
			break;
		memcpy(field, &n, sizeof(n));
		return 0;
	case DF_BOOL:
		if (strcmp(val, "true") != 0 && strcmp(val, "false") != 0)
			break;
		b = strcmp(val, "true") == 0;
		memcpy(field, &b, sizeof(b));
		return 0;
	case DF_DURATION:
		if (go_duration_ms(val, &n) < 0)
			break;
		memcpy(field, &n, sizeof(n));
		return 0;
	case DF_IGNORED:
	case DF_IGNORED_BOOL:
		memcpy(&k, (char *)flags + c->n_ignored_off, sizeof(k));
		if (k < c->max_ignored) {
			memcpy((char *)flags + c->ignored_off + (size_t)k * sizeof(f->name), &f->name,
			       sizeof(f->name));
			k++;
			memcpy((char *)flags + c->n_ignored_off, &k, sizeof(k));
		}
		return 0;
	}
	fprintf(err, "%s: invalid argument \"%s\" for \"--%s\" flag: %s\n", c->prog, val, f->name,
		f->kind == DF_DURATION ? "a duration such as 30s, 1m or 1h30m"
		: f->kind == DF_BOOL   ? "true or false"
				       : "a whole number from 0");
	return -EINVAL;
}

static int parse(const struct daemon_cmdline *c, int argc, const char *const *argv, void *flags,
		 FILE *err)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *val;
		const struct daemon_flag *f = NULL;
		size_t len;

		if (strncmp(arg, "--", 2) == 0 && arg[2])
			name = arg + 2;
		else if (arg[0] == '-' && arg[1] == 'v' && (!arg[2] || arg[2] == '='))
			name = arg + 1;
		else if (arg[0] == '-' && arg[1] == 'h' && !arg[2])
			name = "help";
		else {
			fprintf(err, "%s: %s \"%s\"\n", c->prog,
				arg[0] == '-' ? "unknown shorthand flag in" : "takes no arguments, got", arg);
			return -EINVAL;
		}
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		for (size_t k = 0; k < c->n_flags; k++)
			if (strlen(c->flags[k].name) == len && strncmp(c->flags[k].name, name, len) == 0)
				f = &c->flags[k];
		if (!f) {
			/* Cut: the name is the caller's, of any length. */
			fprintf(err, "%s: unknown flag: --%.*s\n", c->prog, (int)(len > 64 ? 64 : len), name);
			return -EINVAL;
		}
		if (eq)
			val = eq + 1;
		else if (f->kind == DF_BOOL || f->kind == DF_IGNORED_BOOL)
			val = "true";
		else if (i + 1 < argc)
			val = argv[++i];
		else {
			fprintf(err, "%s: flag needs an argument: --%s\n", c->prog, f->name);
			return -EINVAL;
		}
		if (set(c, f, val, flags, err) < 0)
			return -EINVAL;
	}
	return 0;
}

static void usage(const struct daemon_cmdline *c, FILE *out)
{
	fputs(c->usage_head, out);
	for (size_t k = 0; k < c->n_flags; k++) {
		const struct daemon_flag *f = &c->flags[k];

		fprintf(out, "  --%-*s %s", c->name_width, f->name, f->help);
		if (f->def && f->kind != DF_BOOL)
			fprintf(out, " (default %s)", f->def);
		fputc('\n', out);
	}
	fputs(c->usage_tail, out);
}

int daemon_flags_parse(const struct daemon_cmdline *c, int argc, const char *const *argv,
		       void *flags, FILE *err)
{
	bool help, version;

	/* The defaults --help shows are the defaults. */
	for (size_t k = 0; k < c->n_flags; k++)
		if (c->flags[k].def && c->flags[k].kind != DF_IGNORED && c->flags[k].kind != DF_IGNORED_BOOL)
			(void)set(c, &c->flags[k], c->flags[k].def, flags, err);
	if (parse(c, argc, argv, flags, err) < 0 || (c->check && c->check(flags, err) < 0)) {
		fprintf(err, "Run '%s --help' for usage.\n", c->prog);
		return -EINVAL;
	}
	memcpy(&help, (char *)flags + c->help_off, sizeof(help));
	memcpy(&version, (char *)flags + c->version_off, sizeof(version));
	if (help)
		usage(c, stdout);
	else if (version)
		printf("%s (cni-rdma-plugins) %s\n", c->prog, PROJECT_VERSION);
	return help || version ? 0 : 1;
}
