/* CNI error JSON: the one printer of a recorded failure */
#pragma once

#include <stdio.h>

struct cni_err;

/**
 * cni_err_print() - print the error as CNI error JSON
 * @err: the failure
 * @cni_version: version to report, NULL to leave it out
 * @out: stream (stdout for the protocol)
 *
 * Return: 0 on success, negative errno on failure.
 */
int cni_err_print(const struct cni_err *err, const char *cni_version, FILE *out);
