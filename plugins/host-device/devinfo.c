/* What the pod learns of its device: the result's pciID and the device-info file Multus asks for */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/cni/result.h"
#include "common/cni/trust.h"
#include "common/util/cleanup.h"
#include "common/util/error.h"
#include "common/util/file.h"
#include "common/util/json.h"
#include "common/util/log.h"
#include "plugins/host-device/devinfo.h"

#define DEVINFO_KEY "runtimeConfig.CNIDeviceInfoFile"

int devinfo_set_pci(struct cni_result *res, const char *ifname, const char *pci)
{
	if (!*pci)
		return 0;
	for (size_t i = 0; i < res->n_ifaces; i++) {
		struct cni_iface *f = &res->ifaces[i];

		if (!f->sandbox || strcmp(f->name, ifname) != 0)
			continue;
		free(f->pci_id);
		f->pci_id = strdup(pci);
		return f->pci_id ? 0 : -ENOMEM;
	}
	return 0;
}

/* The file's text; NULL when out of memory (caller frees). */
static char *devinfo_json(const char *pci, const char *rdma)
{
	_cleanup_(json_object_putp) struct json_object *root = json_object_new_object();
	struct json_object *p = json_object_new_object();
	const char *text;

	if (!root || !p ||
	    json_object_object_add(root, "type", json_object_new_string("pci")) < 0 ||
	    json_object_object_add(root, "version", json_object_new_string("1.1.0")) < 0 ||
	    json_object_object_add(root, "pci", p) < 0) {
		json_object_put(p);
		return NULL;
	}
	if (json_object_object_add(p, "pci-address", json_object_new_string(pci)) < 0 ||
	    (*rdma && json_object_object_add(p, "rdma-device", json_object_new_string(rdma)) < 0))
		return NULL;
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	return text ? strdup(text) : NULL;
}

void devinfo_write(const char *path, const char *pci, const char *rdma)
{
	_cleanup_free_ char *dir = NULL, *text = NULL;
	_cleanup_close_ int dir_fd = -1;
	struct cni_err err = { 0 };
	const char *step = "", *slash;
	int r;

	if (!*pci) {
		log_info("device-info file %s not written: the device is no PCI function", path);
		return;
	}
	slash = strrchr(path, '/');
	dir = slash ? strndup(path, (size_t)(slash - path)) : NULL;
	text = devinfo_json(pci, rdma);
	if (!dir || !text) {
		log_warning("device-info file %s not written: out of memory", path);
		return;
	}
	r = trust_open_dir(TRUST_DEVINFO, DEVINFO_KEY, dir, true, &dir_fd, &err);
	if (r < 0) {
		log_warning("device-info file %s not written: %s", path,
			    r == -ENOENT ? strerror(-r) : err.msg);
		return;
	}
	r = file_write_atomic_at(dir_fd, slash + 1, text, strlen(text), 0644, &step);
	if (r < 0)
		log_warning("device-info file %s not written: %s: %s", path, step, strerror(-r));
	else
		log_debug("device-info file %s: %s", path, text);
}
