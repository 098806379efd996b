/* Unit tests: nv-ipam config fields, precedence over nv-ipam.conf, requests and refusals */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cni/plugin.h"
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/plugin/config.h"

/* Strings in the context live until the next load. */
static struct cni_ctx loaded;
static char tmp_root[1024];
static char empty_dir[PATH_MAX];
static char json_buf[1 << 17];

static void release_loaded(void)
{
	cni_args_free(&loaded.args);
	cni_conf_free(&loaded.conf);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * The node lets configs name the test's directory and the made-up paths the
 * tests use (trust.h); the defaults stay in the lists for the default confDir.
 */
static int write_node_settings(void)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/node-settings.json", tmp_root);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"confDirs\": [\"%s\", \"/etc/cni/net.d\", \"/run\", \"/in\", \"/file\", "
		   "\"/a\", \"/from\"],\n"
		   " \"stateDirs\": [\"%s\", \"/var/lib/cni/nv-ipam\", \"/run\", \"/in\", "
		   "\"/file\", \"/a\"]}\n",
		tmp_root, tmp_root);
	if (fclose(f) != 0)
		return -1;
	return setenv(TRUST_SETTINGS_ENV, path, 1);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmp_root, sizeof(tmp_root), "%s/nvipam-config-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp_root) || write_node_settings() < 0)
		return -1;
	snprintf(empty_dir, sizeof(empty_dir), "%s/empty", tmp_root);
	return mkdir(empty_dir, 0700);
}

static int group_teardown(void **state)
{
	(void)state;
	release_loaded();
	return nftw(tmp_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A directory under the test root holding nv-ipam.conf with @content (NULL: no file). */
static const char *conf_dir_with(const char *name, const char *content)
{
	static char dir[PATH_MAX];
	char file[PATH_MAX + 32];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s", tmp_root, name);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		fail_msg("mkdir %s: %s", dir, strerror(errno));
	snprintf(file, sizeof(file), "%s/nv-ipam.conf", dir);
	if (!content) {
		(void)unlink(file);
		return dir;
	}
	f = fopen(file, "w");
	if (!f)
		fail_msg("fopen %s: %s", file, strerror(errno));
	fputs(content, f);
	fclose(f);
	return dir;
}

/* A network config for nv-ipam: @ipam and @top are extra members ("" for none). */
static const char *net_in(const char *conf_dir, const char *ipam, const char *top)
{
	char dir_member[PATH_MAX + 16] = "";
	int n;

	if (conf_dir)
		snprintf(dir_member, sizeof(dir_member), ",\"confDir\":\"%s\"", conf_dir);
	n = snprintf(json_buf, sizeof(json_buf),
		     "{\"cniVersion\":\"1.0.0\",\"name\":\"net1\",\"type\":\"macvlan\"%s%s,"
		     "\"ipam\":{\"type\":\"nv-ipam\"%s%s%s}}",
		     *top ? "," : "", top, dir_member, *ipam ? "," : "", ipam);
	if (n < 0 || (size_t)n >= sizeof(json_buf))
		fail_msg("test config too long");
	return json_buf;
}

/* Without a file: the confDir is an empty directory, so only stdin and defaults count. */
static const char *net(const char *ipam, const char *top)
{
	return net_in(empty_dir, ipam, top);
}

static int load(const char *json, const char *cni_args, struct nvipam_config **c,
		struct cni_err *err)
{
	int r;

	release_loaded();
	r = cni_conf_parse(json, strlen(json), &loaded.conf, err);
	if (r < 0)
		return r;
	r = cni_args_parse(cni_args, &loaded.args, err);
	if (r < 0)
		return r;
	return nvipam_config_load(&loaded, NVIPAM_CONFIG_FULL, c, err);
}

static void load_ok(const char *json, const char *cni_args, struct nvipam_config **c)
{
	struct cni_err err = { 0 };

	free(*c);
	*c = NULL;
	if (load(json, cni_args, c, &err) < 0)
		fail_msg("load failed: code %d: %s\nconfig: %s", err.code, err.msg, json);
}

static void expect_refused(const char *json, const char *args, int code, const char *msg_part)
{
	struct nvipam_config untouched, *c = &untouched;
	struct cni_err err = { 0 };

	assert_true(load(json, args, &c, &err) < 0);
	if (err.code != code)
		fail_msg("code %d, expected %d: %s", err.code, code, err.msg);
	if (!strstr(err.msg, msg_part))
		fail_msg("message \"%s\" lacks \"%s\"", err.msg, msg_part);
	/* Written only on success. */
	assert_ptr_equal(c, &untouched);
}

static void assert_ip(const struct ip_addr *a, const char *want)
{
	char buf[IP_PREFIX_STRLEN];

	assert_string_equal(ip_addr_format(a, buf, sizeof(buf)), want);
}

static void test_defaults(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("", ""), "", &c);
	assert_int_equal(c->n_pools, 1);
	assert_string_equal(c->pool_names[0], "net1");
	assert_true(c->pool_from_name);
	assert_string_equal(c->pool_keys[0], "net1");
	assert_int_equal(c->pool_type, NVIPAM_POOL_IPPOOL);
	assert_string_equal(c->pool_file, NVIPAM_DEFAULT_POOL_FILE);
	assert_string_equal(c->store_file, NVIPAM_DEFAULT_STORE_FILE);
	assert_string_equal(c->log_file, "");
	assert_string_equal(c->log_level, "info");
	assert_int_equal(c->lock_timeout_ms, 10000);
	assert_int_equal(c->n_static_ips, 0);
	assert_false(c->allocate_default_gateway);
	assert_false(c->has_index);
	assert_string_equal(c->pod_namespace, "");
	assert_string_equal(c->pod_name, "");
	assert_string_equal(c->pod_uid, "");
	assert_string_equal(c->device_id, "");
}

static void test_every_stdin_field(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("\"poolName\":\"pool-a,pool_b.6\",\"poolType\":\"cidrpool\","
		    "\"forcePoolName\":true,\"logFile\":\"/run/nv.log\",\"logLevel\":\"debug\","
		    "\"lockTimeoutMs\":250,\"daemonSocket\":\"unix:///x.sock\","
		    "\"daemonCallTimeoutSeconds\":3",
		    ""),
		"", &c);
	assert_int_equal(c->n_pools, 2);
	assert_string_equal(c->pool_names[0], "pool-a");
	assert_string_equal(c->pool_names[1], "pool_b.6");
	assert_string_equal(c->pool_keys[0], "cidrpool/pool-a");
	assert_string_equal(c->pool_keys[1], "cidrpool/pool_b.6");
	assert_int_equal(c->pool_type, NVIPAM_POOL_CIDRPOOL);
	assert_string_equal(c->log_file, "/run/nv.log");
	assert_string_equal(c->log_level, "debug");
	assert_int_equal(c->lock_timeout_ms, 250);
}

/* Where state lives is the node's: a network config naming it is refused by every command. */
static void test_state_paths_are_the_nodes(void **state)
{
	static const char *const named[] = {
		"\"storeFile\":\"/run/store\"",
		"\"poolFile\":\"/run/pools.json\"",
		/* Inside another store's pool directory: the lock of the pool "p". */
		"\"storeFile\":\"/var/lib/cni/nv-ipam/store.d/p.lock\"",
	};
	const char *dir = conf_dir_with("node-paths", "{\"storeFile\":\"/file/store\"}");
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		struct cni_err err = { 0 };
		const char *json = net_in(dir, named[i], "");

		expect_refused(json, "", CNI_ERR_INVALID_CONFIG, "the node's setting");
		release_loaded();
		assert_int_equal(cni_conf_parse(json, strlen(json), &loaded.conf, &err), 0);
		assert_int_equal(cni_args_parse("", &loaded.args, &err), 0);
		free(c);
		c = NULL;
		assert_true(nvipam_config_load(&loaded, NVIPAM_CONFIG_STORE, &c, &err) < 0);
		assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	}
	/* Empty counts as unset, as for every key: the node's path stays. */
	load_ok(net_in(dir, "\"storeFile\":\"\",\"poolFile\":\"\"", ""), "", &c);
	assert_string_equal(c->store_file, "/file/store");
}

static void test_field_types(void **state)
{
	static const struct {
		const char *ipam;
		const char *top;
		const char *key;
	} bad[] = {
		{ "\"poolName\":1", "", "poolName" },
		{ "\"poolType\":true", "", "poolType" },
		{ "\"forcePoolName\":\"yes\"", "", "forcePoolName" },
		{ "\"confDir\":1", "", "confDir" },
		{ "\"logFile\":[]", "", "logFile" },
		{ "\"logLevel\":{}", "", "logLevel" },
		{ "\"poolFile\":1", "", "poolFile" },
		{ "\"storeFile\":false", "", "storeFile" },
		{ "\"lockTimeoutMs\":\"5\"", "", "lockTimeoutMs" },
		{ "\"lockTimeoutMs\":5.5", "", "lockTimeoutMs" },
		{ "\"daemonSocket\":5", "", "daemonSocket" },
		{ "\"daemonCallTimeoutSeconds\":\"5\"", "", "daemonCallTimeoutSeconds" },
		{ "\"daemonCallTimeoutSeconds\":1.5", "", "daemonCallTimeoutSeconds" },
		{ "", "\"args\":\"x\"", "args" },
		{ "", "\"args\":{\"cni\":5}", "args.cni" },
		{ "", "\"args\":{\"cni\":{\"poolNames\":\"a\"}}", "args.cni.poolNames" },
		{ "", "\"args\":{\"cni\":{\"poolNames\":[1]}}", "args.cni.poolNames" },
		{ "", "\"args\":{\"cni\":{\"poolType\":1}}", "args.cni.poolType" },
		{ "", "\"args\":{\"cni\":{\"ips\":\"10.0.0.1\"}}", "args.cni.ips" },
		{ "", "\"args\":{\"cni\":{\"allocateDefaultGateway\":\"true\"}}",
		  "args.cni.allocateDefaultGateway" },
		{ "", "\"args\":{\"cni\":{\"allocateIPWithIndex\":\"1\"}}",
		  "args.cni.allocateIPWithIndex" },
		{ "", "\"args\":{\"cni\":{\"allocateIPWithIndex\":1.5}}",
		  "args.cni.allocateIPWithIndex" },
		{ "", "\"runtimeConfig\":{\"ips\":\"10.0.0.1\"}", "runtimeConfig.ips" },
		{ "", "\"runtimeConfig\":{\"ips\":[true]}", "runtimeConfig.ips" },
		{ "", "\"deviceID\":5", "deviceID" },
		{ "", "\"runtimeConfig\":{\"deviceID\":5}", "runtimeConfig.deviceID" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(net_in(strstr(bad[i].ipam, "confDir") ? NULL : empty_dir, bad[i].ipam,
				      bad[i].top),
			       "", CNI_ERR_DECODE, bad[i].key);
}

static void test_missing_ipam(void **state)
{
	(void)state;
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"net1\",\"type\":\"nv-ipam\"}", "",
		       CNI_ERR_INVALID_CONFIG, "IPAM config missing 'ipam' key");
	expect_refused("{\"cniVersion\":\"1.0.0\",\"name\":\"net1\",\"ipam\":null}", "",
		       CNI_ERR_INVALID_CONFIG, "IPAM config missing 'ipam' key");
}

static void test_lock_timeout(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("\"lockTimeoutMs\":1", ""), "", &c);
	assert_int_equal(c->lock_timeout_ms, 1);
	load_ok(net("\"lockTimeoutMs\":600000", ""), "", &c);
	assert_int_equal(c->lock_timeout_ms, 600000);
	expect_refused(net("\"lockTimeoutMs\":0", ""), "", CNI_ERR_INVALID_CONFIG, "lockTimeoutMs");
	expect_refused(net("\"lockTimeoutMs\":600001", ""), "", CNI_ERR_INVALID_CONFIG,
		       "lockTimeoutMs");
	expect_refused(net("\"lockTimeoutMs\":-5", ""), "", CNI_ERR_INVALID_CONFIG, "lockTimeoutMs");
}

static void test_log_level(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	/* The reference leaves unknown levels to its logger: they are carried, not refused. */
	load_ok(net("\"logLevel\":\"panic\"", ""), "", &c);
	assert_string_equal(c->log_level, "panic");
	load_ok(net("\"logLevel\":\"\"", ""), "", &c);
	assert_string_equal(c->log_level, "info");
	expect_refused(net("\"logLevel\":\"averyveryverylonglevel\"", ""), "",
		       CNI_ERR_INVALID_CONFIG, "logLevel");
}

static const char file_all[] = "{\n"
			       "  \"poolName\": \"filepool\",\n"
			       "  \"poolType\": \"CIDRPOOL\",\n"
			       "  \"logFile\": \"/file/nv.log\",\n"
			       "  \"logLevel\": \"warning\",\n"
			       "  \"poolFile\": \"/file/pools.json\",\n"
			       "  \"storeFile\": \"/file/store\",\n"
			       "  \"lockTimeoutMs\": 2000,\n"
			       "  \"daemonSocket\":    \"unix:///var/lib/cni/nv-ipam/daemon.sock\",\n"
			       "  \"daemonCallTimeoutSeconds\":    5,\n"
			       "  \"confDir\": \"/ignored\",\n"
			       "  \"unknownKey\": [1, 2]\n"
			       "}\n";

static void test_precedence_file_over_default(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	const char *dir = conf_dir_with("layered", file_all);

	(void)state;
	load_ok(net_in(dir, "", ""), "", &c);
	assert_int_equal(c->n_pools, 1);
	assert_string_equal(c->pool_names[0], "filepool");
	assert_string_equal(c->pool_keys[0], "cidrpool/filepool");
	assert_int_equal(c->pool_type, NVIPAM_POOL_CIDRPOOL);
	assert_string_equal(c->log_file, "/file/nv.log");
	assert_string_equal(c->log_level, "warning");
	assert_string_equal(c->pool_file, "/file/pools.json");
	assert_string_equal(c->store_file, "/file/store");
	assert_int_equal(c->lock_timeout_ms, 2000);

	/* Empty strings on stdin count as unset, as Go's omitempty overlay sees them. */
	load_ok(net_in(dir, "\"poolName\":\"\",\"poolType\":\"\",\"logFile\":\"\"", ""),
		"", &c);
	assert_string_equal(c->pool_names[0], "filepool");
	assert_int_equal(c->pool_type, NVIPAM_POOL_CIDRPOOL);
	assert_string_equal(c->log_file, "/file/nv.log");
	assert_string_equal(c->pool_file, "/file/pools.json");

	/* A trailing slash on confDir finds the same file. */
	{
		char slashed[PATH_MAX + 2], file[PATH_MAX + 16];

		snprintf(slashed, sizeof(slashed), "%s/", dir);
		load_ok(net_in(slashed, "", ""), "", &c);
		assert_string_equal(c->pool_file, "/file/pools.json");
		/* ... and names it without a doubled slash. */
		dir = conf_dir_with("slashed", "{");
		snprintf(slashed, sizeof(slashed), "%s//", dir);
		snprintf(file, sizeof(file), "%s/nv-ipam.conf", dir);
		expect_refused(net_in(slashed, "", ""), "", CNI_ERR_INVALID_CONFIG, file);
	}
}

static void test_precedence_stdin_over_file(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	const char *dir = conf_dir_with("layered", file_all);

	(void)state;
	load_ok(net_in(dir,
		       "\"poolName\":\"stdinpool\",\"poolType\":\"ippool\",\"logFile\":\"/in/nv.log\","
		       "\"logLevel\":\"error\",\"lockTimeoutMs\":3000",
		       ""),
		"", &c);
	assert_string_equal(c->pool_names[0], "stdinpool");
	assert_string_equal(c->pool_keys[0], "stdinpool");
	assert_int_equal(c->pool_type, NVIPAM_POOL_IPPOOL);
	assert_string_equal(c->log_file, "/in/nv.log");
	assert_string_equal(c->log_level, "error");
	/* The node's paths: a network config cannot override them. */
	assert_string_equal(c->pool_file, "/file/pools.json");
	assert_string_equal(c->store_file, "/file/store");
	assert_int_equal(c->lock_timeout_ms, 3000);
}

static void test_precedence_partial_file(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	const char *dir = conf_dir_with("partial", "{\"storeFile\":\"/file/store\"}");

	(void)state;
	load_ok(net_in(dir, "\"logLevel\":\"debug\"", ""), "", &c);
	assert_string_equal(c->store_file, "/file/store");
	assert_string_equal(c->pool_file, NVIPAM_DEFAULT_POOL_FILE);
	assert_string_equal(c->pool_names[0], "net1");
	assert_int_equal(c->pool_type, NVIPAM_POOL_IPPOOL);
	assert_string_equal(c->log_level, "debug");
	assert_string_equal(c->log_file, "");
	assert_int_equal(c->lock_timeout_ms, 10000);

	/* As written by the reference's ipam-node, verbatim: daemon keys are accepted. */
	dir = conf_dir_with("node-written", "{\n"
					    "  \"daemonSocket\":    \"unix:///var/lib/cni/nv-ipam/daemon.sock\",\n"
					    "  \"daemonCallTimeoutSeconds\":    5,\n"
					    "  \"logFile\":   \"/var/log/nv-ipam-cni.log\",\n"
					    "  \"logLevel\": \"info\",\n"
					    "  \"forcePoolName\": false\n"
					    "}");
	load_ok(net_in(dir, "", ""), "", &c);
	assert_string_equal(c->log_file, "/var/log/nv-ipam-cni.log");
	assert_string_equal(c->pool_names[0], "net1");
}

static void test_force_pool_name_from_file(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	const char *dir = conf_dir_with("forced", "{\"forcePoolName\":true}");

	(void)state;
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "no pool provided");
	/* stdin false beats the file's true. */
	load_ok(net_in(dir, "\"forcePoolName\":false", ""), "", &c);
	assert_string_equal(c->pool_names[0], "net1");
	load_ok(net_in(dir, "\"poolName\":\"given\"", ""), "", &c);
	assert_string_equal(c->pool_names[0], "given");
}

static void test_conf_file_errors(void **state)
{
	const char *dir;
	char big[70000];

	(void)state;
	dir = conf_dir_with("broken", "{\"logLevel\": \"info\",");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, dir);
	dir = conf_dir_with("broken", "");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "nv-ipam.conf");
	dir = conf_dir_with("broken", "[1]");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "nv-ipam.conf");
	dir = conf_dir_with("broken", "{} {}");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "nv-ipam.conf");

	/* Wrong types in the file: a decode error naming the file and the key. */
	dir = conf_dir_with("broken", "{\"logLevel\": 3}");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_DECODE, "nv-ipam.conf: field \"logLevel\"");
	dir = conf_dir_with("broken", "{\"forcePoolName\": \"false\"}");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_DECODE, "forcePoolName");
	dir = conf_dir_with("broken", "{\"lockTimeoutMs\": 0}");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG,
		       "nv-ipam.conf: field \"lockTimeoutMs\"");
	dir = conf_dir_with("broken", "{\"storeFile\": \"/var/lib/../../tmp/store\"}");
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "nv-ipam.conf: storeFile");

	/* Bounded: a huge file is refused before it is parsed. */
	memset(big, ' ', sizeof(big) - 3);
	memcpy(big + sizeof(big) - 3, "{}", 3);
	dir = conf_dir_with("broken", big);
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "larger than");
	/* ... while the same padding under the bound parses. */
	{
		_cleanup_free_ struct nvipam_config *c = NULL;

		memcpy(big + 60000, "{}", 3);
		dir = conf_dir_with("broken", big);
		load_ok(net_in(dir, "", ""), "", &c);
		assert_string_equal(c->pool_file, NVIPAM_DEFAULT_POOL_FILE);
	}

	/* A directory in place of the file. */
	dir = conf_dir_with("dirfile", NULL);
	{
		char sub[PATH_MAX + 32];

		snprintf(sub, sizeof(sub), "%s/nv-ipam.conf", dir);
		assert_int_equal(mkdir(sub, 0700), 0);
	}
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "not a regular file");
}

static void test_missing_conf_dir(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	char dir[PATH_MAX + 16];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/does-not-exist", tmp_root);
	load_ok(net_in(dir, "", ""), "", &c);
	assert_string_equal(c->store_file, NVIPAM_DEFAULT_STORE_FILE);
}

static void test_paths(void **state)
{
	static const struct {
		const char *ipam;
		const char *key;
	} bad[] = {
		{ "\"confDir\":\"etc/cni\"", "confDir" },
		{ "\"confDir\":\"/etc/cni/../../tmp\"", "confDir" },
		{ "\"poolFile\":\"pools.json\"", "poolFile" },
		{ "\"poolFile\":\"/etc/cni/../shadow\"", "poolFile" },
		{ "\"storeFile\":\"./store\"", "storeFile" },
		{ "\"storeFile\":\"/var/lib/cni/..\"", "storeFile" },
		/* Outside the directories the node lets a config name. */
		{ "\"confDir\":\"/root/.ssh\"", "confDir \"/root/.ssh\" is outside" },
		{ "\"poolFile\":\"/etc/shadow\"", "poolFile \"/etc/shadow\" is outside" },
		{ "\"storeFile\":\"/etc/cron.d/store\"", "storeFile \"/etc/cron.d/store\" is outside" },
		{ "\"storeFile\":\"/runaway/store\"", "is outside" },
	};
	_cleanup_free_ struct nvipam_config *c = NULL;
	char file[4200];
	const char *dir;

	(void)state;
	/* confDir from the network config; the node's paths from its nv-ipam.conf. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (strstr(bad[i].ipam, "confDir")) {
			expect_refused(net_in(NULL, bad[i].ipam, ""), "", CNI_ERR_INVALID_CONFIG,
				       bad[i].key);
			continue;
		}
		snprintf(file, sizeof(file), "{%s}", bad[i].ipam);
		dir = conf_dir_with("bad-paths", file);
		expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, bad[i].key);
	}
	/* ".." only as a whole component escapes. */
	dir = conf_dir_with("odd-paths", "{\"poolFile\":\"/a/..b/c..\",\"storeFile\":\"/a/.../s\"}");
	load_ok(net_in(dir, "\"logFile\":\"/l/./x\"", ""), "", &c);
	assert_string_equal(c->pool_file, "/a/..b/c..");
	assert_string_equal(c->store_file, "/a/.../s");
	/* logFile is checked where it is opened (a refused one must not stop a DEL). */
	assert_string_equal(c->log_file, "/l/./x");

	snprintf(file, sizeof(file), "{\"poolFile\":\"/%04000d\"}", 0);
	dir = conf_dir_with("long-path", file);
	expect_refused(net_in(dir, "", ""), "", CNI_ERR_INVALID_CONFIG, "poolFile is longer than");
}

/* DEL and GC need only the store: what only an ADD reads cannot stop them. */
static void test_store_scope(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	struct cni_err err = { 0 };
	const char *json;

	(void)state;
	json = net_in(conf_dir_with("scope", "{\"storeFile\":\"/run/s\"}"),
		      "\"poolName\":\"bad name\",\"poolType\":\"nope\"",
		      "\"args\":{\"cni\":{\"ips\":[\"x\"]}}");
	release_loaded();
	assert_int_equal(cni_conf_parse(json, strlen(json), &loaded.conf, &err), 0);
	assert_int_equal(cni_args_parse("", &loaded.args, &err), 0);
	free(c);
	c = NULL;
	assert_int_equal(nvipam_config_load(&loaded, NVIPAM_CONFIG_STORE, &c, &err), 0);
	assert_string_equal(c->store_file, "/run/s");
	expect_refused(json, "", CNI_ERR_INVALID_CONFIG, "invalid pool name");

	/* A store path the node's settings refuse fails DEL and GC as it fails ADD: the
	 * store cannot be reached, and an address nobody releases is held forever. */
	{
		const char *dir = conf_dir_with("refused", "{\"storeFile\": \"/etc/cron.d/store\"}");

		json = net_in(dir, "", "");
		release_loaded();
		err = (struct cni_err){ 0 };
		assert_int_equal(cni_conf_parse(json, strlen(json), &loaded.conf, &err), 0);
		assert_int_equal(cni_args_parse("", &loaded.args, &err), 0);
		free(c);
		c = NULL;
		assert_int_equal(nvipam_config_load(&loaded, NVIPAM_CONFIG_STORE, &c, &err), -EINVAL);
		assert_int_equal(err.code, CNI_ERR_INVALID_CONFIG);
	}
}

static void test_pool_names(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	char ipam[400];

	(void)state;
	load_ok(net("\"poolName\":\"p1\"", ""), "", &c);
	assert_int_equal(c->n_pools, 1);
	assert_string_equal(c->pool_names[0], "p1");
	load_ok(net("\"poolName\":\"p1,p2\"", ""), "", &c);
	assert_int_equal(c->n_pools, 2);
	assert_string_equal(c->pool_keys[0], "p1");
	assert_string_equal(c->pool_keys[1], "p2");

	expect_refused(net("\"poolName\":\"a,b,c\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "pool field can't contain more then two entries");
	expect_refused(net("\"poolName\":\"a,,b\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "pool field can't contain more then two entries");
	expect_refused(net("\"poolName\":\"a,\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "pool field has invalid format");
	expect_refused(net("\"poolName\":\",a\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "pool field has invalid format");
	expect_refused(net("\"poolName\":\",\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "pool field has invalid format");
	expect_refused(net("\"poolName\":\"p,p\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "pool field names the pool \"p\" twice");
	expect_refused(net("", "\"args\":{\"cni\":{\"poolNames\":[\"x\",\"x\"]}}"), "",
		       CNI_ERR_INVALID_CONFIG, "names the pool \"x\" twice");
	expect_refused(net("\"poolName\":\"a b\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "invalid pool name \"a b\"");
	expect_refused(net("\"poolName\":\"p1, p2\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "invalid pool name \" p2\"");
	expect_refused(net("\"poolName\":\"-x\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "invalid pool name");
	expect_refused(net("\"poolName\":\"a/b\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "invalid pool name");

	/* A Kubernetes name is at most 253 characters. */
	snprintf(ipam, sizeof(ipam), "\"poolName\":\"%0253d\"", 0);
	load_ok(net(ipam, ""), "", &c);
	assert_int_equal(strlen(c->pool_names[0]), 253);
	snprintf(ipam, sizeof(ipam), "\"poolName\":\"%0253d\",\"poolType\":\"cidrpool\"", 0);
	load_ok(net(ipam, ""), "", &c);
	assert_int_equal(strlen(c->pool_keys[0]), 253 + strlen("cidrpool/"));
	snprintf(ipam, sizeof(ipam), "\"poolName\":\"%0254d\"", 0);
	expect_refused(net(ipam, ""), "", CNI_ERR_INVALID_CONFIG, "longer than 253");
}

static void test_pool_names_from_args(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("\"poolName\":\"p\"", "\"args\":{\"cni\":{\"poolNames\":[\"x\",\"y\"]}}"), "", &c);
	assert_int_equal(c->n_pools, 2);
	assert_string_equal(c->pool_names[0], "x");
	assert_string_equal(c->pool_names[1], "y");
	/* Case-insensitive keys, as Go matches them. */
	load_ok(net("", "\"args\":{\"cni\":{\"poolnames\":[\"lower\"]}}"), "", &c);
	assert_string_equal(c->pool_names[0], "lower");
	/* An empty list leaves poolName in charge. */
	load_ok(net("\"poolName\":\"p\"", "\"args\":{\"cni\":{\"poolNames\":[]}}"), "", &c);
	assert_int_equal(c->n_pools, 1);
	assert_string_equal(c->pool_names[0], "p");

	expect_refused(net("", "\"args\":{\"cni\":{\"poolNames\":[\"a\",\"b\",\"c\"]}}"), "",
		       CNI_ERR_INVALID_CONFIG, "pool field can't contain more then two entries");
	expect_refused(net("", "\"args\":{\"cni\":{\"poolNames\":[\"a\",\"\"]}}"), "",
		       CNI_ERR_INVALID_CONFIG, "pool field has invalid format");
	expect_refused(net("", "\"args\":{\"cni\":{\"poolNames\":[\"a,b\"]}}"), "",
		       CNI_ERR_INVALID_CONFIG, "invalid pool name");
}

static void test_force_pool_name(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	expect_refused(net("\"forcePoolName\":true", ""), "", CNI_ERR_INVALID_CONFIG,
		       "no pool provided");
	expect_refused(net("\"forcePoolName\":true,\"poolName\":\"\"", ""), "",
		       CNI_ERR_INVALID_CONFIG, "no pool provided");
	load_ok(net("\"forcePoolName\":true,\"poolName\":\"given\"", ""), "", &c);
	assert_string_equal(c->pool_names[0], "given");
	load_ok(net("\"forcePoolName\":true", "\"args\":{\"cni\":{\"poolNames\":[\"fromargs\"]}}"), "",
		&c);
	assert_string_equal(c->pool_names[0], "fromargs");
	load_ok(net("\"forcePoolName\":false", ""), "", &c);
	assert_string_equal(c->pool_names[0], "net1");
}

static void test_pool_type(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("\"poolName\":\"a,b\",\"poolType\":\"CIDRPool\"", ""), "", &c);
	assert_int_equal(c->pool_type, NVIPAM_POOL_CIDRPOOL);
	assert_string_equal(c->pool_keys[0], "cidrpool/a");
	assert_string_equal(c->pool_keys[1], "cidrpool/b");
	assert_string_equal(c->pool_names[1], "b");
	load_ok(net("\"poolType\":\"IPPOOL\"", ""), "", &c);
	assert_int_equal(c->pool_type, NVIPAM_POOL_IPPOOL);
	assert_string_equal(c->pool_keys[0], "net1");

	expect_refused(net("\"poolType\":\"foobar\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "unsupported poolType foobar, supported values: ippool, cidrpool");
	expect_refused(net("\"poolType\":\"FooBar\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "unsupported poolType foobar,");
	expect_refused(net("\"poolType\":\"ip-pool\"", ""), "", CNI_ERR_INVALID_CONFIG,
		       "unsupported poolType ip-pool");

	/* args.cni.poolType overrides; an empty one does not. */
	load_ok(net("\"poolType\":\"ippool\"", "\"args\":{\"cni\":{\"poolType\":\"CidrPool\"}}"), "", &c);
	assert_int_equal(c->pool_type, NVIPAM_POOL_CIDRPOOL);
	assert_string_equal(c->pool_keys[0], "cidrpool/net1");
	load_ok(net("\"poolType\":\"cidrpool\"", "\"args\":{\"cni\":{\"poolType\":\"\"}}"), "", &c);
	assert_int_equal(c->pool_type, NVIPAM_POOL_CIDRPOOL);
	expect_refused(net("\"poolType\":\"ippool\"", "\"args\":{\"cni\":{\"poolType\":\"foobar\"}}"),
		       "", CNI_ERR_INVALID_CONFIG, "unsupported poolType foobar");
}

static void test_static_ip_priority(void **state)
{
	static const char all3[] = "\"runtimeConfig\":{\"ips\":[\"10.0.0.1/24\"]},"
				   "\"args\":{\"cni\":{\"ips\":[\"10.0.0.2\"]}}";
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("", all3), "IP=10.0.0.3", &c);
	assert_int_equal(c->n_static_ips, 1);
	assert_ip(&c->static_ips[0], "10.0.0.1");

	load_ok(net("", "\"args\":{\"cni\":{\"ips\":[\"10.0.0.2\",\"fd00::2/64\"]}}"), "IP=10.0.0.3",
		&c);
	assert_int_equal(c->n_static_ips, 2);
	assert_ip(&c->static_ips[0], "10.0.0.2");
	assert_ip(&c->static_ips[1], "fd00::2");

	load_ok(net("", ""), "IgnoreUnknown=1;IP=10.0.0.3/16", &c);
	assert_int_equal(c->n_static_ips, 1);
	assert_ip(&c->static_ips[0], "10.0.0.3");

	/* Empty lists fall through to the next source. */
	load_ok(net("", "\"runtimeConfig\":{\"ips\":[]},\"args\":{\"cni\":{\"ips\":[]}}"), "IP=10.0.0.3",
		&c);
	assert_int_equal(c->n_static_ips, 1);
	assert_ip(&c->static_ips[0], "10.0.0.3");
	load_ok(net("", "\"runtimeConfig\":{\"ips\":[]},\"args\":{\"cni\":{\"ips\":[\"10.0.0.2\"]}}"),
		"", &c);
	assert_int_equal(c->n_static_ips, 1);
	assert_ip(&c->static_ips[0], "10.0.0.2");

	/* Multus passes several as a comma-separated list. */
	load_ok(net("", ""), "IP=10.0.0.3,fd00::3/64", &c);
	assert_int_equal(c->n_static_ips, 2);
	assert_ip(&c->static_ips[0], "10.0.0.3");
	assert_ip(&c->static_ips[1], "fd00::3");

	/* An empty IP= is no request. */
	load_ok(net("", ""), "IP=", &c);
	assert_int_equal(c->n_static_ips, 0);

	/* Go prints an IPv4-mapped address as IPv4; so does this. */
	load_ok(net("", "\"runtimeConfig\":{\"ips\":[\"::ffff:10.1.2.3\"]}"), "", &c);
	assert_int_equal(c->static_ips[0].family, AF_INET);
	assert_ip(&c->static_ips[0], "10.1.2.3");

	/* A lower-priority source is not looked at once a higher one has addresses. */
	load_ok(net("", "\"runtimeConfig\":{\"ips\":[\"10.0.0.1\"]},"
			"\"args\":{\"cni\":{\"ips\":[\"bogus\"]}}"),
		"IP=bogus", &c);
	assert_int_equal(c->n_static_ips, 1);
}

static void test_static_ip_invalid(void **state)
{
	char top[1024];

	(void)state;
	expect_refused(net("", "\"runtimeConfig\":{\"ips\":[\"10.0.0.1\",\"x\"]}"), "",
		       CNI_ERR_INVALID_CONFIG,
		       "runtimeConfig.ips: static IP request contains invalid IP address \"x\"");
	expect_refused(net("", "\"args\":{\"cni\":{\"ips\":[\"10.0.0.1/33\"]}}"), "",
		       CNI_ERR_INVALID_CONFIG, "args.cni.ips");
	expect_refused(net("", "\"args\":{\"cni\":{\"ips\":[\"\"]}}"), "", CNI_ERR_INVALID_CONFIG,
		       "args.cni.ips");
	expect_refused(net("", "\"args\":{\"cni\":{\"ips\":[\"10.0.0.1/x\"]}}"), "",
		       CNI_ERR_INVALID_CONFIG, "args.cni.ips");
	expect_refused(net("", ""), "IP=10.0.0.256", CNI_ERR_INVALID_CONFIG,
		       "CNI_ARGS IP: static IP request contains invalid IP address \"10.0.0.256\"");
	expect_refused(net("", ""), "IP=10.0.0.1,", CNI_ERR_INVALID_CONFIG, "CNI_ARGS IP");
	expect_refused(net("", ""), "IP=fe80::1%eth0", CNI_ERR_INVALID_CONFIG, "CNI_ARGS IP");

	/* At most 8. */
	snprintf(top, sizeof(top), "\"runtimeConfig\":{\"ips\":[%s]}",
		 "\"10.0.0.1\",\"10.0.0.2\",\"10.0.0.3\",\"10.0.0.4\",\"10.0.0.5\",\"10.0.0.6\","
		 "\"10.0.0.7\",\"10.0.0.8\"");
	{
		_cleanup_free_ struct nvipam_config *c = NULL;

		load_ok(net("", top), "", &c);
		assert_int_equal(c->n_static_ips, 8);
		assert_ip(&c->static_ips[7], "10.0.0.8");
	}
	snprintf(top, sizeof(top), "\"runtimeConfig\":{\"ips\":[%s]}",
		 "\"10.0.0.1\",\"10.0.0.2\",\"10.0.0.3\",\"10.0.0.4\",\"10.0.0.5\",\"10.0.0.6\","
		 "\"10.0.0.7\",\"10.0.0.8\",\"10.0.0.9\"");
	expect_refused(net("", top), "", CNI_ERR_INVALID_CONFIG, "more than 8 static IPs");
}

static void test_requests(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("", "\"args\":{\"cni\":{\"allocateDefaultGateway\":true}}"), "", &c);
	assert_true(c->allocate_default_gateway);
	assert_false(c->has_index);
	load_ok(net("", "\"args\":{\"cni\":{\"allocateIPWithIndex\":0}}"), "", &c);
	assert_true(c->has_index);
	assert_int_equal(c->index, 0);
	assert_false(c->allocate_default_gateway);
	load_ok(net("", "\"args\":{\"cni\":{\"allocateIPWithIndex\":2147483647,"
			"\"allocateDefaultGateway\":false}}"),
		"", &c);
	assert_true(c->has_index);
	assert_int_equal(c->index, 2147483647);

	expect_refused(net("", "\"args\":{\"cni\":{\"allocateIPWithIndex\":-1}}"), "",
		       CNI_ERR_INVALID_CONFIG, "allocateIPWithIndex can't be negative");
	expect_refused(net("", "\"args\":{\"cni\":{\"allocateIPWithIndex\":2147483648}}"), "",
		       CNI_ERR_INVALID_CONFIG, "allocateIPWithIndex");
}

static void test_conflicts(void **state)
{
	(void)state;
	expect_refused(net("", "\"args\":{\"cni\":{\"allocateDefaultGateway\":true,"
			       "\"ips\":[\"10.0.0.1\"]}}"),
		       "", CNI_ERR_INVALID_CONFIG,
		       "allocateDefaultGateway can't be used together with static IP request");
	expect_refused(net("", "\"args\":{\"cni\":{\"allocateDefaultGateway\":true}}"), "IP=10.0.0.1",
		       CNI_ERR_INVALID_CONFIG,
		       "allocateDefaultGateway can't be used together with static IP request");
	expect_refused(net("", "\"args\":{\"cni\":{\"allocateDefaultGateway\":true,"
			       "\"allocateIPWithIndex\":3}}"),
		       "", CNI_ERR_INVALID_CONFIG,
		       "allocateDefaultGateway can't be used together with allocateIPWithIndex");
	expect_refused(net("", "\"runtimeConfig\":{\"ips\":[\"10.0.0.1\"]},"
			       "\"args\":{\"cni\":{\"allocateIPWithIndex\":3}}"),
		       "", CNI_ERR_INVALID_CONFIG,
		       "allocateIPWithIndex can't be used together with static IP request");
}

static void test_args_without_cni(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;

	(void)state;
	load_ok(net("\"poolName\":\"p\"", "\"args\":{}"), "", &c);
	assert_string_equal(c->pool_names[0], "p");
	assert_int_equal(c->pool_type, NVIPAM_POOL_IPPOOL);
	load_ok(net("", "\"args\":{\"other\":{\"x\":1}}"), "", &c);
	assert_string_equal(c->pool_names[0], "net1");
	load_ok(net("", "\"args\":{\"cni\":{}}"), "", &c);
	assert_string_equal(c->pool_names[0], "net1");
	assert_false(c->allocate_default_gateway);
}

static void test_k8s_args(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	char args[600];

	(void)state;
	load_ok(net("", ""),
		"IgnoreUnknown=1;K8S_POD_NAMESPACE=ns1;K8S_POD_NAME=pod-1;"
		"K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=0b5e1b4c-2d7a-4c5e-9f0e-1a2b3c4d5e6f",
		&c);
	assert_string_equal(c->pod_namespace, "ns1");
	assert_string_equal(c->pod_name, "pod-1");
	assert_string_equal(c->pod_uid, "0b5e1b4c-2d7a-4c5e-9f0e-1a2b3c4d5e6f");
	/* Known keys need no IgnoreUnknown. */
	load_ok(net("", ""), "K8S_POD_NAMESPACE=ns2;K8S_POD_NAME=p2;K8S_POD_INFRA_CONTAINER_ID=x", &c);
	assert_string_equal(c->pod_namespace, "ns2");
	assert_string_equal(c->pod_name, "p2");
	assert_string_equal(c->pod_uid, "");

	/* Not required: cnitool and podman send none. */
	load_ok(net("", ""), "", &c);
	assert_string_equal(c->pod_name, "");
	assert_string_equal(c->pod_namespace, "");

	expect_refused(net("", ""), "K8S_POD_NAME=p;FOO=bar", CNI_ERR_INVALID_ENV, "FOO");
	load_ok(net("", ""), "K8S_POD_NAME=p;FOO=bar;IgnoreUnknown=true", &c);
	assert_string_equal(c->pod_name, "p");

	snprintf(args, sizeof(args), "K8S_POD_NAME=%0300d", 0);
	expect_refused(net("", ""), args, CNI_ERR_INVALID_ENV, "K8S_POD_NAME is longer than");
}

static void test_device_id(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	char top[400];

	(void)state;
	load_ok(net("", "\"deviceID\":\"0000:3b:00.2\""), "", &c);
	assert_string_equal(c->device_id, "0000:3b:00.2");
	load_ok(net("", "\"runtimeConfig\":{\"deviceID\":\"0000:3b:00.3\"}"), "", &c);
	assert_string_equal(c->device_id, "0000:3b:00.3");
	load_ok(net("", "\"deviceID\":\"0000:3b:00.2\",\"runtimeConfig\":{\"deviceID\":\"0000:3b:00.3\"}"),
		"", &c);
	assert_string_equal(c->device_id, "0000:3b:00.2");
	load_ok(net("", "\"deviceID\":\"\",\"runtimeConfig\":{\"deviceID\":\"0000:3b:00.3\"}"), "", &c);
	assert_string_equal(c->device_id, "0000:3b:00.3");
	snprintf(top, sizeof(top), "\"deviceID\":\"%0300d\"", 0);
	expect_refused(net("", top), "", CNI_ERR_INVALID_CONFIG, "deviceID is longer than");
}

/*
 * What a handover would write into the reference daemon's store and that it reads back
 * otherwise (bytes that are not UTF-8) is refused at ADD, with the code of a bad
 * container ID; the other commands still read what an older build recorded.
 */
static void test_metadata_refused_at_add(void **state)
{
	static const char *const bad[] = { "\xff", "a\xc3", "\xed\xa0\x80", "a\x01b", "a\x7f", "\xc2\x85" };
	static const char *const keys[] = { "K8S_POD_NAMESPACE", "K8S_POD_NAME", "K8S_POD_UID" };
	_cleanup_free_ struct nvipam_config *c = NULL;
	char args[128], top[64];

	(void)state;
	loaded.env.command = CNI_CMD_ADD;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(args, sizeof(args), "%s=%s", keys[k], bad[i]);
			expect_refused(net("", ""), args, CNI_ERR_INVALID_ENV, keys[k]);
		}
	}
	expect_refused(net("", "\"deviceID\":\"0000:3b:00.2\\u0001\""), "", CNI_ERR_INVALID_CONFIG,
		       "deviceID holds a control character");
	/* UTF-8 that is not ASCII is a name like another. */
	load_ok(net("", "\"deviceID\":\"d\u00e9v\""), "K8S_POD_NAME=caf\xc3\xa9", &c);
	assert_string_equal(c->pod_name, "caf\xc3\xa9");
	assert_string_equal(c->device_id, "d\xc3\xa9v");
	snprintf(top, sizeof(top), "\"deviceID\":\"x\\u0007\"");
	loaded.env.command = CNI_CMD_CHECK;
	load_ok(net("", top), "K8S_POD_NAME=p\xffq;K8S_POD_UID=\x01", &c);
	assert_string_equal(c->pod_name, "p\xffq");
	loaded.env.command = CNI_CMD_NONE;
}

/* Child side of test_default_conf_dir: 0 passed, 1 failed, 77 skipped. */
static int default_conf_dir_child(void)
{
	static const char *const dirs[] = { "/etc/cni", "/etc/cni/net.d", "/etc/cni/net.d/nv-ipam.d" };
	_cleanup_free_ struct nvipam_config *c = NULL;
	struct cni_err err = { 0 };
	char map[64];
	FILE *f;
	int fd;

	if (unshare(CLONE_NEWNS) < 0) {
		uid_t uid = getuid();
		gid_t gid = getgid();

		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return 77;
		fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd >= 0) {
			(void)!write(fd, "deny", 4);
			close(fd);
		}
		snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
		fd = open("/proc/self/uid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return 77;
		close(fd);
		snprintf(map, sizeof(map), "0 %u 1", (unsigned int)gid);
		fd = open("/proc/self/gid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return 77;
		close(fd);
	}
	/* Nothing done here may reach the host's mount table. */
	if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	if (mount("tmpfs", "/etc", "tmpfs", 0, "mode=0755") < 0)
		return 77;

	/* An empty default confDir: built-in defaults. */
	if (nvipam_config_load(&loaded, NVIPAM_CONFIG_FULL, &c, &err) < 0 ||
	    strcmp(c->pool_file, NVIPAM_DEFAULT_POOL_FILE) != 0)
		return 1;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(dirs[i], 0755) < 0)
			return 1;
	f = fopen(NVIPAM_DEFAULT_CONF_DIR "/nv-ipam.conf", "w");
	if (!f)
		return 1;
	fputs("{\"poolFile\":\"/from/default/dir\",\"poolName\":\"dflt\"}", f);
	if (fclose(f) != 0)
		return 1;
	free(c);
	c = NULL;
	if (nvipam_config_load(&loaded, NVIPAM_CONFIG_FULL, &c, &err) < 0)
		return 1;
	if (strcmp(c->pool_file, "/from/default/dir") != 0 || strcmp(c->pool_names[0], "dflt") != 0)
		return 1;
	return 0;
}

static void test_default_conf_dir(void **state)
{
	_cleanup_free_ struct nvipam_config *c = NULL;
	int status = 0;
	pid_t pid;

	(void)state;
	/* No confDir: the default one is read, which only a private mount namespace can fake. */
	load_ok(net_in(NULL, "", ""), "", &c);
	if (access(NVIPAM_DEFAULT_CONF_DIR "/nv-ipam.conf", F_OK) == 0)
		skip();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = default_conf_dir_child();

		release_loaded();
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_every_stdin_field),
		cmocka_unit_test(test_state_paths_are_the_nodes),
		cmocka_unit_test(test_field_types),
		cmocka_unit_test(test_missing_ipam),
		cmocka_unit_test(test_lock_timeout),
		cmocka_unit_test(test_log_level),
		cmocka_unit_test(test_precedence_file_over_default),
		cmocka_unit_test(test_precedence_stdin_over_file),
		cmocka_unit_test(test_precedence_partial_file),
		cmocka_unit_test(test_force_pool_name_from_file),
		cmocka_unit_test(test_conf_file_errors),
		cmocka_unit_test(test_missing_conf_dir),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_store_scope),
		cmocka_unit_test(test_pool_names),
		cmocka_unit_test(test_pool_names_from_args),
		cmocka_unit_test(test_force_pool_name),
		cmocka_unit_test(test_pool_type),
		cmocka_unit_test(test_static_ip_priority),
		cmocka_unit_test(test_static_ip_invalid),
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_args_without_cni),
		cmocka_unit_test(test_k8s_args),
		cmocka_unit_test(test_device_id),
		cmocka_unit_test(test_metadata_refused_at_add),
		cmocka_unit_test(test_default_conf_dir),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
