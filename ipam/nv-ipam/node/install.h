/* nv-ipam and nv-ipam-tool installed into the host's CNI bin directory, atomically */
#pragma once

struct cni_err;

/**
 * node_install() - put nv-ipam and nv-ipam-tool (the file beside it) into the bin directory
 * @bin_dir: the CNI bin directory (created when missing)
 * @nvipam: the nv-ipam binary to install
 * @log: called with a line per binary ("installed ...", "identical ..."), may be NULL
 * @err: code 5 naming the file and the step that failed; the target is then untouched
 *
 * Each goes through a temporary file in @bin_dir, fsynced and renamed over the old one,
 * under the installers' lock on the directory (cni-install's): a runtime exec'ing it then
 * gets the old or the new binary. One with the same bytes and mode is left alone.
 *
 * A SIGTERM or SIGINT pending (the caller blocks them) ends a wait for another installer.
 *
 * Return: 0 on success, -ECANCELED when told to stop, negative errno on failure.
 */
int node_install(const char *bin_dir, const char *nvipam, void (*log)(const char *line),
		 struct cni_err *err);
