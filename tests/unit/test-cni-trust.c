/* Unit tests: the node settings file and what it lets a network config's paths name */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/trust.h"
#include "common/util/error.h"

static char dir[] = "/tmp/cni-trust-test-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Paths below the test's directory; each call has its own buffer of a small ring. */
static const char *at(const char *rel)
{
	static char bufs[4][256];
	static unsigned int next;
	char *p = bufs[next++ % 4];

	snprintf(p, sizeof(bufs[0]), "%s/%s", dir, rel);
	return p;
}

static const char *settings_write(const char *json, mode_t mode)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/settings.json", dir);
	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(json, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

/* What one call answered in a process of its own (the settings are read once per process). */
struct answer {
	int r;
	struct cni_err err;
	bool fd_regular; /* trust_open_file(): the descriptor is a regular file */
};

enum call { CALL_CHECK, CALL_OPEN_FILE, CALL_OPEN_FOLLOW, CALL_OPEN_DIR_0755 };

static struct answer ask(const char *settings, enum call call, enum trust_area area,
			 const char *path)
{
	struct answer a = { 0 };
	int pfd[2], status;
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct cni_err err = { 0 };
		struct answer w;
		struct stat st;
		int fd = -1, r;

		close(pfd[0]);
		setenv(TRUST_SETTINGS_ENV, settings, 1);
		if (call == CALL_CHECK)
			r = trust_path_check(area, "key", path, &err);
		else if (call == CALL_OPEN_FOLLOW)
			r = trust_open_file_follow(area, "key", path, &fd, &err);
		else if (call == CALL_OPEN_DIR_0755)
			r = trust_open_dir_mode(area, "key", path, 0755, &fd, &err);
		else
			r = trust_open_file(area, "key", path, O_RDONLY, 0, &fd, &err);
		/* Field by field: the error's buffers past their strings are never written. */
		memset(&w, 0, sizeof(w));
		w.r = r;
		w.err.code = err.code;
		snprintf(w.err.msg, sizeof(w.err.msg), "%s", err.msg);
		w.fd_regular = call != CALL_CHECK && r == 0 && fstat(fd, &st) == 0 &&
			       (call == CALL_OPEN_DIR_0755 ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
		_exit(write(pfd[1], &w, sizeof(w)) == (ssize_t)sizeof(w) ? 0 : 1);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &a, sizeof(a)), sizeof(a));
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return a;
}

static struct answer check(const char *settings, enum trust_area area, const char *path)
{
	return ask(settings, CALL_CHECK, area, path);
}

static void assert_refused(struct answer a, const char *text)
{
	assert_true(a.r < 0);
	assert_int_equal(a.err.code, CNI_ERR_INVALID_CONFIG);
	if (!strstr(a.err.msg, text))
		fail_msg("message \"%s\" lacks \"%s\"", a.err.msg, text);
}

/* No settings file: each area is its default directory. */
static void test_defaults(void **state)
{
	const char *none = at("no-such-settings.json");

	(void)state;
	assert_int_equal(check(none, TRUST_LOG, "/var/log/cni.log").r, 0);
	assert_int_equal(check(none, TRUST_LOG, "/var/log//sub/x.log").r, 0);
	assert_int_equal(check(none, TRUST_CONF, "/etc/cni/net.d/nv-ipam.d/x").r, 0);
	assert_int_equal(check(none, TRUST_STATE, "/var/lib/cni/nv-ipam/store").r, 0);
	assert_int_equal(check(none, TRUST_DEVINFO, "/var/run/k8s.cni.cncf.io/devinfo/cni/x.json").r, 0);
	assert_refused(check(none, TRUST_DEVINFO, "/etc/cni/net.d/00-multus.conf"), "is outside");
	assert_refused(check(none, TRUST_LOG, "/etc/shadow"),
		       "is outside the directories a network config may name for it (/var/log)");
	/* The file named is missing: the refusal says so. */
	assert_refused(check(none, TRUST_LOG, "/etc/shadow"), "(\"logDirs\"), a file that does not exist");
	assert_refused(check(none, TRUST_STATE, "/var/lib/cni/nv-ipamx/store"), "is outside");
	/* State roots: where primary networks keep their state, host-local's default among them. */
	assert_int_equal(check(none, TRUST_STATE_ROOT, "/var/lib/cni/networks").r, 0);
	assert_int_equal(check(none, TRUST_STATE_ROOT, "/run/cni-ipam-state").r, 0);
	assert_int_equal(check(none, TRUST_STATE_ROOT, "/var/run/cni-ipam-state").r, 0);
	assert_refused(check(none, TRUST_STATE_ROOT, "/var/lib/cnix/networks"),
		       "(/var/lib/cni, /run, /var/run)");
	assert_refused(check(none, TRUST_STATE_ROOT, "/etc/cni/net.d"), "is outside");
	assert_refused(check(none, TRUST_STATE_ROOT, "/tmp/networks"), "is outside");
	assert_int_equal(check(none, TRUST_RESOLV, "/etc/resolv.conf").r, 0);
	assert_int_equal(check(none, TRUST_RESOLV, "/run/systemd/resolve/resolv.conf").r, 0);
	assert_refused(check(none, TRUST_RESOLV, "/root/resolv.conf"), "(/etc, /run, /var/run)");
	assert_refused(check(none, TRUST_LOG, "/var/log/../../etc/shadow"),
		       "without \".\" or \"..\" components");
	assert_refused(check(none, TRUST_LOG, "/var/log/./x"), "without \".\" or \"..\"");
	assert_refused(check(none, TRUST_LOG, "var/log/x"), "must be an absolute path");
	assert_refused(check(none, TRUST_LOG, ""), "must be an absolute path");
}

/* A key given replaces its default; the others keep theirs; the deepest directory holds. */
static void test_settings_given(void **state)
{
	const char *s;

	(void)state;
	s = settings_write("{\"logDirs\": [\"/run/a//\", \"/srv/logs\"], \"stateDirs\": []}", 0644);
	assert_int_equal(check(s, TRUST_LOG, "/run/a/x.log").r, 0);
	assert_int_equal(check(s, TRUST_LOG, "/srv/logs/x.log").r, 0);
	assert_refused(check(s, TRUST_LOG, "/var/log/x.log"), "(/run/a, /srv/logs)");
	assert_int_equal(check(s, TRUST_CONF, "/etc/cni/net.d/x").r, 0);
	/* An empty list allows nothing. */
	assert_refused(check(s, TRUST_STATE, "/var/lib/cni/nv-ipam/store"), "(none)");
	/* Keys are matched as Go's encoding/json matches them, case aside. */
	s = settings_write("{\"LOGDIRS\": [\"/run/b\"]}", 0600);
	assert_int_equal(check(s, TRUST_LOG, "/run/b/x").r, 0);
	s = settings_write("{\"deviceInfoDirs\": [\"/run/devinfo\"]}", 0600);
	assert_int_equal(check(s, TRUST_DEVINFO, "/run/devinfo/cni/x.json").r, 0);
	assert_refused(check(s, TRUST_DEVINFO, "/var/run/k8s.cni.cncf.io/devinfo/x.json"), "(/run/devinfo)");
	s = settings_write("{\"logDirs\": [\"/\"]}", 0600);
	assert_int_equal(check(s, TRUST_LOG, "/anything/at/all").r, 0);
}

/* The file grants trust: only root (or the caller) may own it, no one else write it. */
static void test_settings_file_refused(void **state)
{
	const char *s;

	(void)state;
	s = settings_write("{}", 0666);
	assert_refused(check(s, TRUST_LOG, "/var/log/x"),
		       "must be a regular file owned by root and writable by no one else");
	s = settings_write("{}", 0620);
	assert_refused(check(s, TRUST_LOG, "/var/log/x"), "writable by no one else");
	if (geteuid() == 0) {
		s = settings_write("{}", 0644);
		assert_int_equal(chown(s, 65534, 65534), 0);
		assert_refused(check(s, TRUST_LOG, "/var/log/x"), "owned by root");
	}
	assert_refused(check(dir, TRUST_LOG, "/var/log/x"), "not a regular file");
}

/* Every malformed settings file refuses every path (code 7), never falls back to defaults. */
static void test_settings_malformed(void **state)
{
	static const struct {
		const char *json;
		const char *text;
	} cases[] = {
		{ "{\"logDirs\": [\"/run/a\"]", "node settings" },
		{ "[\"/var/log\"]", "expected an object" },
		{ "{\"logDir\": [\"/run/a\"]}",
		  "unknown key (known: logDirs, confDirs, stateDirs, deviceInfoDirs, stateRoots, "
		  "resolvConfDirs, socketDirs)" },
		{ "{\"stateRoots\": [\"/var/lib/cni/../..\"]}", "\"stateRoots\"[0] must be an absolute" },
		{ "{\"logDirs\": \"/run/a\"}", "node settings" },
		{ "{\"logDirs\": [\"run/a\"]}", "\"logDirs\"[0] must be an absolute path" },
		{ "{\"confDirs\": [\"/etc\", \"/etc/../root\"]}", "\"confDirs\"[1] must be an absolute" },
		{ "{\"logDirs\": [\"/a\"], \"logDirs\": [\"/b\"]}", "node settings" },
	};
	char many[1024] = "{\"stateDirs\": [";
	char big[70 * 1024];
	const char *s;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = settings_write(cases[i].json, 0644);
		assert_refused(check(s, TRUST_LOG, "/var/log/x"), cases[i].text);
		assert_refused(check(s, TRUST_CONF, "/etc/cni/net.d/x"), cases[i].text);
	}
	for (int i = 0; i < 17; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "%s\"/d%d\"", i ? "," : "", i);
	strcat(many, "]}");
	s = settings_write(many, 0644);
	assert_refused(check(s, TRUST_STATE, "/d0/x"), "lists more than 16 directories");
	memset(big, ' ', sizeof(big) - 3);
	memcpy(big + sizeof(big) - 3, "{}", 3);
	s = settings_write(big, 0644);
	assert_refused(check(s, TRUST_LOG, "/var/log/x"), "larger than 65536 bytes");
}

/* Opening beneath an area: no symbolic link followed, nothing that is not a regular file. */
static void test_open_beneath(void **state)
{
	char json[512];
	const char *s;
	struct answer a;
	FILE *f;

	(void)state;
	assert_int_equal(mkdir(at("state"), 0700), 0);
	assert_int_equal(mkdir(at("state/sub"), 0700), 0);
	f = fopen(at("state/sub/store"), "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(symlink("/etc", at("state/etc")), 0);
	assert_int_equal(symlink(at("state/sub/store"), at("state/sub/link")), 0);
	assert_int_equal(mkfifo(at("state/fifo"), 0600), 0);
	snprintf(json, sizeof(json), "{\"stateDirs\": [\"%s\"]}", at("state"));
	s = settings_write(json, 0644);

	a = ask(s, CALL_OPEN_FILE, TRUST_STATE, at("state/sub/store"));
	assert_int_equal(a.r, 0);
	assert_true(a.fd_regular);
	assert_refused(ask(s, CALL_OPEN_FILE, TRUST_STATE, at("state/etc/passwd")),
		       "a symbolic link is on the way");
	assert_refused(ask(s, CALL_OPEN_FILE, TRUST_STATE, at("state/sub/link")),
		       "a symbolic link is on the way");
	/* A FIFO would block an open for reading: refused, and at once. */
	assert_refused(ask(s, CALL_OPEN_FILE, TRUST_STATE, at("state/fifo")), "is not a regular file");
	assert_refused(ask(s, CALL_OPEN_FILE, TRUST_STATE, at("state/sub")), "but a directory");
	/* Missing: -ENOENT with no error, for callers to whom that is no failure. */
	a = ask(s, CALL_OPEN_FILE, TRUST_STATE, at("state/none"));
	assert_int_equal(a.r, -ENOENT);
	assert_int_equal(a.err.code, CNI_OK);
}

/*
 * A file only read may be reached through links, as long as the file itself is inside the
 * area: /etc/resolv.conf leading into /run. What it leads to is checked, not its name.
 */
static void test_open_follow(void **state)
{
	char json[512];
	const char *s;
	struct answer a;
	FILE *f;

	(void)state;
	assert_int_equal(mkdir(at("etc"), 0700), 0);
	assert_int_equal(mkdir(at("run"), 0700), 0);
	assert_int_equal(mkdir(at("other"), 0700), 0);
	f = fopen(at("run/stub-resolv.conf"), "w");
	assert_non_null(f);
	fclose(f);
	f = fopen(at("other/secret"), "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(symlink(at("run/stub-resolv.conf"), at("etc/resolv.conf")), 0);
	assert_int_equal(symlink(at("other/secret"), at("etc/leak.conf")), 0);
	assert_int_equal(symlink(at("run"), at("etc/run-link")), 0);
	assert_int_equal(mkfifo(at("run/fifo"), 0600), 0);
	/* An area directory reached through a link of the node's counts as where it leads. */
	assert_int_equal(symlink(at("run"), at("var-run")), 0);
	snprintf(json, sizeof(json), "{\"resolvConfDirs\": [\"%s\", \"%s\"]}", at("etc"), at("var-run"));
	s = settings_write(json, 0644);

	a = ask(s, CALL_OPEN_FOLLOW, TRUST_RESOLV, at("etc/resolv.conf"));
	assert_int_equal(a.r, 0);
	assert_true(a.fd_regular);
	a = ask(s, CALL_OPEN_FOLLOW, TRUST_RESOLV, at("etc/run-link/stub-resolv.conf"));
	assert_int_equal(a.r, 0);
	assert_refused(ask(s, CALL_OPEN_FOLLOW, TRUST_RESOLV, at("etc/leak.conf")), "leads to");
	assert_refused(ask(s, CALL_OPEN_FOLLOW, TRUST_RESOLV, at("other/secret")), "is outside");
	assert_refused(ask(s, CALL_OPEN_FOLLOW, TRUST_RESOLV, at("var-run/fifo")),
		       "is not a regular file");
	assert_refused(ask(s, CALL_OPEN_FOLLOW, TRUST_RESOLV, at("etc")), "but a directory");
	a = ask(s, CALL_OPEN_FOLLOW, TRUST_RESOLV, at("etc/none"));
	assert_int_equal(a.r, -ENOENT);
	assert_int_equal(a.err.code, CNI_OK);
}

/* A state directory made with the mode a program sharing it uses, its root included. */
static void test_open_dir_mode(void **state)
{
	char json[512];
	const char *s;
	struct answer a;
	struct stat st;
	mode_t old = umask(022);

	(void)state;
	snprintf(json, sizeof(json), "{\"stateRoots\": [\"%s\"]}", at("root/lib"));
	s = settings_write(json, 0644);
	a = ask(s, CALL_OPEN_DIR_0755, TRUST_STATE_ROOT, at("root/lib/networks/net0"));
	umask(old);
	assert_int_equal(a.r, 0);
	assert_true(a.fd_regular);
	assert_int_equal(stat(at("root/lib/networks/net0"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(at("root/lib"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(symlink("/etc", at("root/lib/etc")), 0);
	assert_refused(ask(s, CALL_OPEN_DIR_0755, TRUST_STATE_ROOT, at("root/lib/etc/x")),
		       "a symbolic link is on the way");
	assert_refused(ask(s, CALL_OPEN_DIR_0755, TRUST_STATE_ROOT, at("root/libx")), "is outside");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_settings_given),
		cmocka_unit_test(test_settings_file_refused),
		cmocka_unit_test(test_settings_malformed),
		cmocka_unit_test(test_open_beneath),
		cmocka_unit_test(test_open_follow),
		cmocka_unit_test(test_open_dir_mode),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
