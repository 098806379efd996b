/* Trust: the directories a network config's paths may name, and opening files beneath them */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct cni_err;

/*
 * A network config is written by whoever may create a NAD, and the plugins run
 * as root: a path it names (logFile, confDir, poolFile, storeFile,
 * CNIDeviceInfoFile) may only
 * lead below the node's directories for that kind of file. The node sets them
 * in its settings file (TRUST_SETTINGS_FILE, the build's node_settings option,
 * or the file the runtime's environment names in TRUST_SETTINGS_ENV); without
 * one they are the defaults below. Format: docs/security.md.
 */
#define TRUST_SETTINGS_ENV "CNI_RDMA_PLUGINS_CONF"

enum trust_area {
	TRUST_LOG,   /* logFile: "logDirs", default /var/log */
	TRUST_CONF,  /* confDir, poolFile: "confDirs", default /etc/cni/net.d */
	TRUST_STATE, /* storeFile: "stateDirs", default /var/lib/cni/nv-ipam */
	TRUST_DEVINFO, /* runtimeConfig.CNIDeviceInfoFile: "deviceInfoDirs", default
			* /var/run/k8s.cni.cncf.io/devinfo (where Multus has them written) */
	TRUST_STATE_ROOT, /* a state directory a config names (host-local's dataDir):
			   * "stateRoots", default /var/lib/cni, /run, /var/run */
	TRUST_RESOLV,  /* a file read for its DNS settings (host-local's resolvConf):
			* "resolvConfDirs", default /etc, /run, /var/run */
	TRUST_SOCKET,  /* a daemon's unix socket a plugin connects to (dhcp's daemonSocketPath):
			* "socketDirs", default /run/cni */
};

/**
 * trust_path_check() - whether a config may name a path, without opening it
 * @area: the kind of file
 * @key: the config key, for the message ("logFile")
 * @path: the value
 * @err: code 7 when the path is not absolute, has a "." or ".." component, or is
 *       outside the area's directories; code 7 when the node's settings file is
 *       invalid
 *
 * Return: 0 when it may, negative errno otherwise.
 */
int trust_path_check(enum trust_area area, const char *key, const char *path,
		     struct cni_err *err);

/**
 * trust_open_file() - open a regular file a config names, beneath its area's directory
 * @area: the kind of file
 * @key: the config key, for messages
 * @path: the value (checked as trust_path_check() does)
 * @flags: open(2) flags (O_CREAT allowed); never blocks, never follows a symbolic link
 * @mode: mode of a file O_CREAT creates
 * @ret_fd: descriptor, written only on success
 * @err: code 7 as trust_path_check(), and for a symbolic link, a directory, a
 *       FIFO or a device at or on the way to @path; -ENOENT is returned with
 *       @err untouched, for callers to whom a missing file is no error; code 5
 *       for other failures
 *
 * Return: 0 on success, negative errno on failure.
 */
int trust_open_file(enum trust_area area, const char *key, const char *path, int flags,
		    mode_t mode, int *ret_fd, struct cni_err *err);

/* The first line of a log file a network config named, written when it is created. */
#define TRUST_LOG_MARK "# cni-rdma-plugins log: written by the CNI plugins of this node\n"

/**
 * trust_open_log() - open for appending a log file a network config names, below a log
 *                    directory: a new one (created mode 0600, starting with
 *                    TRUST_LOG_MARK) or one that starts with the mark
 * @key: the config key, for messages
 * @path: the value (checked as trust_path_check() does)
 * @ret_fd: descriptor, written only on success
 * @err: as trust_open_file(), and code 7 for an existing file without the mark: the
 *       config cannot make the plugins append to the node's other files
 *
 * Return: 0 on success, negative errno on failure.
 */
int trust_open_log(const char *key, const char *path, int *ret_fd, struct cni_err *err);

/**
 * trust_open_dir() - open (and create) a directory a config names, beneath its area's directory
 * @area: the kind of file
 * @key: the config key, for messages
 * @path: the directory (checked as trust_path_check() does)
 * @create: create what is missing, the area's directory included (mode 0700)
 * @ret_fd: descriptor, written only on success
 * @err: as trust_open_file()
 *
 * Return: 0 on success, negative errno on failure.
 */
int trust_open_dir(enum trust_area area, const char *key, const char *path, bool create,
		   int *ret_fd, struct cni_err *err);

/**
 * trust_open_dir_mode() - trust_open_dir() creating what is missing with a mode of its own
 * @area: the kind of file
 * @key: the config key, for messages
 * @path: the directory (checked as trust_path_check() does)
 * @create_mode: mode of the directories created (the area's own included, the umask
 *               applies); 0 creates none
 * @ret_fd: descriptor, written only on success
 * @err: as trust_open_file()
 *
 * For a directory another program shares, which makes it with that mode (host-local's
 * store: 0755 as upstream's).
 *
 * Return: 0 on success, negative errno on failure.
 */
int trust_open_dir_mode(enum trust_area area, const char *key, const char *path,
			mode_t create_mode, int *ret_fd, struct cni_err *err);

/**
 * trust_open_file_follow() - open for reading a regular file a config names, symbolic links
 *                            followed as long as where they lead is inside the area
 * @area: the kind of file (one that is only read)
 * @key: the config key, for messages
 * @path: the value (checked as trust_path_check() does)
 * @ret_fd: descriptor (O_RDONLY), written only on success
 * @err: code 7 as trust_path_check(), and when the file the path leads to lies outside
 *       every directory of the area (their own links followed), is a directory, a FIFO
 *       or a device (none is opened); -ENOENT is returned with @err untouched; code 5
 *       for other failures
 *
 * For a file the node commonly keeps behind a link (/etc/resolv.conf leading into
 * /run): the check is made on the object opened, not on its name.
 *
 * Return: 0 on success, negative errno on failure.
 */
int trust_open_file_follow(enum trust_area area, const char *key, const char *path, int *ret_fd,
			   struct cni_err *err);

/**
 * trust_open_socket() - look up a unix socket a config names, beneath its area's directory
 * @area: the kind of file
 * @key: the config key, for messages
 * @path: the value (checked as trust_path_check() does)
 * @ret_fd: an O_PATH descriptor of the socket, written only on success: connect(2) to
 *          "/proc/self/fd/<fd>" reaches that very socket, whatever is renamed over @path
 * @err: code 7 as trust_path_check(), and for a symbolic link on the way or at @path, or
 *       for a file that is no socket; -ENOENT is returned with @err untouched; code 5 for
 *       other failures
 *
 * Return: 0 on success, negative errno on failure.
 */
int trust_open_socket(enum trust_area area, const char *key, const char *path, int *ret_fd,
		      struct cni_err *err);

/**
 * trust_settings_path() - the node settings file in effect
 *
 * Return: TRUST_SETTINGS_ENV's value when set, TRUST_SETTINGS_FILE otherwise.
 */
const char *trust_settings_path(void);
