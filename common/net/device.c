/* Host devices in sysfs: PCI, auxiliary-bus and kernel-path lookups, DPDK drivers, SR-IOV VFs */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/net/device.h"
#include "common/util/cleanup.h"
#include "common/util/file.h"

DEFINE_CLEANUP_FUNC(closedirp, DIR *, closedir);

/* /sys<rel>; rel starts with '/'. */
static int __attribute__((format(printf, 3, 4))) sysfs_path(char *buf, size_t size,
							     const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	n = snprintf(buf, size, "/sys%s", rel);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* A PCI address or auxiliary device name is one path component. */
static bool component_ok(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0 &&
	       strlen(s) < NAME_MAX;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * The smallest entry of a directory whose name starts with @prefix ("" for
 * any): Go's ReadDir sorts, and the reference takes the first.
 */
static int dir_first(const char *dir, const char *prefix, char *ret, size_t size)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *e;
	bool found = false;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		if (strlen(e->d_name) >= size)
			continue;
		if (!found || strcmp(e->d_name, ret) < 0) {
			snprintf(ret, size, "%s", e->d_name);
			found = true;
		}
	}
	return found ? 0 : -ENOENT;
}

/* The interface in <devdir>/net, or in <devdir>/virtio<N>/net when @virtio. */
static int netdev_in(const char *devdir, bool virtio, char ret_name[IFNAMSIZ])
{
	char path[PATH_MAX];
	char sub[NAME_MAX + 1];
	int n, r;

	if (!is_dir(devdir))
		return -ENOENT;
	n = snprintf(path, sizeof(path), "%s/net", devdir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	r = dir_first(path, "", ret_name, IFNAMSIZ);
	if (r == 0 || !virtio)
		return r == 0 ? 0 : -ENODEV;
	/* virtio-net: the interface hangs off the virtio device below the PCI function. */
	if (dir_first(devdir, "virtio", sub, sizeof(sub)) < 0)
		return -ENODEV;
	n = snprintf(path, sizeof(path), "%s/%s/net", devdir, sub);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	return dir_first(path, "", ret_name, IFNAMSIZ) == 0 ? 0 : -ENODEV;
}

bool device_pci_exists(const char *addr)
{
	char path[PATH_MAX];

	return component_ok(addr) && sysfs_path(path, sizeof(path), "/bus/pci/devices/%s", addr) == 0 &&
	       is_dir(path);
}

bool device_aux_exists(const char *id)
{
	char path[PATH_MAX];

	return component_ok(id) &&
	       sysfs_path(path, sizeof(path), "/bus/auxiliary/devices/%s", id) == 0 && is_dir(path);
}

/* The last component of where the symbolic link @path points, in @buf. */
static int link_base(const char *path, char *buf, size_t size, const char **ret)
{
	ssize_t n = readlink(path, buf, size - 1);
	const char *base;

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	base = strrchr(buf, '/');
	*ret = base ? base + 1 : buf;
	return 0;
}

int device_pci_driver_is_dpdk(const char *addr)
{
	static const char *const dpdk_drivers[] = { "vfio-pci", "uio_pci_generic", "igb_uio" };
	char path[PATH_MAX], target[PATH_MAX];
	const char *driver;
	int r;

	if (!component_ok(addr))
		return -EINVAL;
	if (!device_pci_exists(addr))
		return -ENOENT;
	r = sysfs_path(path, sizeof(path), "/bus/pci/devices/%s/driver", addr);
	if (r < 0)
		return r;
	r = link_base(path, target, sizeof(target), &driver);
	if (r < 0)
		return r == -ENOENT ? 0 : r; /* no driver bound */
	for (size_t i = 0; i < ARRAY_SIZE(dpdk_drivers); i++)
		if (strcmp(driver, dpdk_drivers[i]) == 0)
			return 1;
	return 0;
}

int device_pci_netdev(const char *addr, char ret_name[IFNAMSIZ])
{
	char path[PATH_MAX];
	int r;

	if (!component_ok(addr))
		return -EINVAL;
	r = sysfs_path(path, sizeof(path), "/bus/pci/devices/%s", addr);
	return r < 0 ? r : netdev_in(path, true, ret_name);
}

int device_aux_netdev(const char *id, char ret_name[IFNAMSIZ])
{
	char path[PATH_MAX];
	int r;

	if (!component_ok(id))
		return -EINVAL;
	r = sysfs_path(path, sizeof(path), "/bus/auxiliary/devices/%s", id);
	return r < 0 ? r : netdev_in(path, false, ret_name);
}

int device_kernelpath_netdev(const char *kpath, char ret_name[IFNAMSIZ])
{
	static const char prefix[] = "/sys/devices/";
	char path[PATH_MAX];
	int r;

	if (!kpath || strncmp(kpath, prefix, strlen(prefix)) != 0 || strstr(kpath, "/../") ||
	    (strlen(kpath) >= 3 && strcmp(kpath + strlen(kpath) - 3, "/..") == 0))
		return -EINVAL;
	r = sysfs_path(path, sizeof(path), "%s", kpath + strlen("/sys"));
	return r < 0 ? r : netdev_in(path, false, ret_name);
}

int device_netdev_pci(const char *ifname, char *ret, size_t size)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	int r;

	if (!component_ok(ifname))
		return -EINVAL;
	r = sysfs_path(path, sizeof(path), "/class/net/%s/device", ifname);
	if (r >= 0)
		r = link_base(path, target, sizeof(target), &base);
	if (r < 0)
		return r;
	if (!device_pci_exists(base))
		return -ENOENT;
	if (strlen(base) >= size)
		return -ENAMETOOLONG;
	snprintf(ret, size, "%s", base);
	return 0;
}

/* A sysfs attribute's number (its first line), in @base; -EINVAL for anything else. */
static int read_number(const char *path, int base, unsigned long max, unsigned long *ret)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	char *end;
	/* sysfs gives every attribute the page size as its size (64 KiB on some arm64 kernels). */
	int r = file_read(path, 65536, &text, &len);

	if (r < 0)
		return r;
	text[strcspn(text, "\n")] = '\0';
	*ret = strtoul(text, &end, base);
	return end == text || *end || *ret > max ? -EINVAL : 0;
}

int device_ib_port(const char *ifname, struct device_ib_port *ret)
{
	char path[PATH_MAX];
	unsigned long v;
	int r;

	*ret = (struct device_ib_port){ 0 };
	if (!component_ok(ifname))
		return -EINVAL;
	r = sysfs_path(path, sizeof(path), "/class/net/%s/device/infiniband", ifname);
	if (r < 0)
		return r;
	r = dir_first(path, "", ret->dev, sizeof(ret->dev));
	if (r < 0)
		return r == -ENOTDIR ? -ENOENT : r;
	r = sysfs_path(path, sizeof(path), "/class/net/%s/dev_port", ifname);
	if (r >= 0)
		r = read_number(path, 10, 255, &v);
	if (r < 0)
		return r;
	ret->port = (unsigned int)v + 1;
	for (size_t i = 0;; i++) {
		r = sysfs_path(path, sizeof(path), "/class/infiniband/%s/ports/%u/pkeys/%zu", ret->dev,
			       ret->port, i);
		if (r >= 0)
			r = read_number(path, 16, 0xffff, &v);
		/* The table ends at the first index missing; none at all: sysfs does not say. */
		if (r == -ENOENT)
			return i ? 0 : -ENOENT;
		if (r < 0)
			return r;
		if (v && ret->n_pkeys < sizeof(ret->pkeys) / sizeof(ret->pkeys[0]))
			ret->pkeys[ret->n_pkeys++] = (uint16_t)v;
	}
}

int device_netdev_vf(const char *ifname, struct device_vf *ret)
{
	_cleanup_(closedirp) DIR *d = NULL;
	char path[PATH_MAX], target[PATH_MAX];
	struct device_vf vf = { 0 };
	const char *base;
	struct dirent *e;
	int r;

	r = device_netdev_pci(ifname, vf.pci, sizeof(vf.pci));
	if (r < 0)
		return r;
	r = sysfs_path(path, sizeof(path), "/bus/pci/devices/%s/physfn", vf.pci);
	if (r >= 0)
		r = link_base(path, target, sizeof(target), &base);
	if (r < 0)
		return r;
	if (!component_ok(base) || strlen(base) >= sizeof(vf.pf_pci))
		return -EINVAL;
	snprintf(vf.pf_pci, sizeof(vf.pf_pci), "%s", base);
	r = sysfs_path(path, sizeof(path), "/bus/pci/devices/%s", vf.pf_pci);
	if (r < 0)
		return r;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char link[PATH_MAX];
		unsigned long n;
		char *end;

		if (strncmp(e->d_name, "virtfn", 6) != 0 || !e->d_name[6])
			continue;
		n = strtoul(e->d_name + 6, &end, 10);
		if (*end || n > UINT32_MAX || snprintf(link, sizeof(link), "%s/%s", path,
						       e->d_name) >= (int)sizeof(link))
			continue;
		if (link_base(link, target, sizeof(target), &base) == 0 &&
		    strcmp(base, vf.pci) == 0) {
			vf.index = (unsigned int)n;
			*ret = vf;
			return 0;
		}
	}
	/* A physfn whose PF does not list the VF: sysfs changing under us (sriov_numvfs). */
	return -ENOENT;
}

/* Writes @text to a sysfs attribute, whole, in one write as sysfs takes it. */
static int sysfs_write(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int device_pci_rebind(const char *addr)
{
	char path[PATH_MAX], target[PATH_MAX], driver[NAME_MAX + 1];
	const char *base;
	int r;

	if (!component_ok(addr))
		return -EINVAL;
	r = sysfs_path(path, sizeof(path), "/bus/pci/devices/%s/driver", addr);
	if (r >= 0)
		r = link_base(path, target, sizeof(target), &base);
	if (r < 0)
		return r;
	if (!component_ok(base))
		return -EINVAL;
	snprintf(driver, sizeof(driver), "%s", base);
	r = sysfs_path(path, sizeof(path), "/bus/pci/drivers/%s/unbind", driver);
	if (r >= 0)
		r = sysfs_write(path, addr);
	if (r < 0)
		return r;
	r = sysfs_path(path, sizeof(path), "/bus/pci/drivers/%s/bind", driver);
	return r < 0 ? r : sysfs_write(path, addr);
}
