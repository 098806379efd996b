/* A fake sysfs tree in place of /sys for common/net/device.c, made by the linker */
#pragma once

/**
 * fake_sysfs_set_root() - read sysfs below another directory
 * @root: directory standing in for /sys, NULL for /sys again
 *
 * common/net/device.c is linked with stat64, opendir, readlink and file_read
 * wrapped (-Wl,--wrap, the list in tests/unit/meson.build): a path below /sys
 * is looked up below @root instead.
 */
void fake_sysfs_set_root(const char *root);

/**
 * fake_sysfs_mkdirs() - mkdir -p <root>/<rel>, for fake sysfs trees
 * @root: the tree's root
 * @rel: path below it
 *
 * Return: 0 on success, negative errno on failure.
 */
int fake_sysfs_mkdirs(const char *root, const char *rel);

/**
 * fake_sysfs_root() - the directory standing in for /sys, "" for none
 */
const char *fake_sysfs_root(void);
