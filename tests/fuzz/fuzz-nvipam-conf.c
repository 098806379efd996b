/*
 * libFuzzer target: nv-ipam's configuration: the input as the node's nv-ipam.conf under
 * a fixed network config, then as the network config itself (its "ipam" section)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cni/args.h"
#include "common/cni/conf.h"
#include "common/cni/plugin.h"
#include "common/cni/trust.h"
#include "common/util/error.h"
#include "ipam/nv-ipam/plugin/config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/fuzz-nvipam-conf-XXXXXX";
static char conf_file[sizeof(dir) + 16];
static char *net_conf;

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) < 0)
		abort();
}

/* The two files the fuzzer writes, and their directory, go when it exits (a run ends in exit()). */
static void remove_dir(void)
{
	char path[sizeof(dir) + 32];

	snprintf(path, sizeof(path), "%s/settings.json", dir);
	(void)unlink(path);
	(void)unlink(conf_file);
	(void)rmdir(dir);
}

/* The node lets configs name the fuzzer's directory (trust.h), as the tests' node settings do. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char settings[sizeof(dir) + 32], text[512];

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	snprintf(settings, sizeof(settings), "%s/settings.json", dir);
	snprintf(text, sizeof(text), "{\"logDirs\":[\"%s\"],\"confDirs\":[\"%s\"],\"stateDirs\":[\"%s\"]}",
		 dir, dir, dir);
	write_file(settings, text, strlen(text));
	setenv(TRUST_SETTINGS_ENV, settings, 1);
	snprintf(conf_file, sizeof(conf_file), "%s/nv-ipam.conf", dir);
	if (asprintf(&net_conf, "{\"cniVersion\":\"1.0.0\",\"name\":\"net\",\"ipam\":{\"type\":\"nv-ipam\","
		     "\"confDir\":\"%s\"}}", dir) < 0)
		abort();
	return 0;
}

static void load(const char *conf, size_t len)
{
	static const char *const args_text[] = {
		"", "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_UID=u;IP=10.0.0.1,fd00::1",
	};

	for (size_t a = 0; a < sizeof(args_text) / sizeof(args_text[0]); a++) {
		struct cni_ctx ctx = { .env = { .command = CNI_CMD_ADD, .container_id = "c", .ifname = "e" } };
		struct cni_err err = { 0 };

		if (cni_conf_parse(conf, len, &ctx.conf, &err) < 0 ||
		    cni_args_parse(args_text[a], &ctx.args, &err) < 0) {
			cni_conf_free(&ctx.conf);
			cni_args_free(&ctx.args);
			continue;
		}
		for (int scope = 0; scope < 2; scope++) {
			struct nvipam_config *c = NULL;

			err = (struct cni_err){ 0 };
			if (nvipam_config_load(&ctx, scope ? NVIPAM_CONFIG_STORE : NVIPAM_CONFIG_FULL, &c,
					       &err) < 0) {
				if (err.code == CNI_OK || !err.msg[0])
					abort();
				continue;
			}
			if (scope == 0 && (c->n_pools < 1 || c->n_pools > NVIPAM_MAX_POOLS || !c->store_file[0] ||
					   !c->pool_file[0] || !c->pool_keys[0][0]))
				abort();
			free(c);
		}
		cni_conf_free(&ctx.conf);
		cni_args_free(&ctx.args);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_file(conf_file, data, size);
	load(net_conf, strlen(net_conf));
	(void)unlink(conf_file);
	load((const char *)data, size);
	return 0;
}
