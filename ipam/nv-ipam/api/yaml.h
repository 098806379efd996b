/* A YAML document as a json-c tree, for kubeconfig files */
#pragma once

#include <stddef.h>

struct cni_err;
struct json_object;

/**
 * api_yaml_parse() - the first document of a YAML text (JSON is YAML too)
 * @buf: text (need not be NUL-terminated)
 * @len: its length
 * @origin: file name for messages
 * @ret: the document: mappings become objects, sequences arrays; a plain null, ~ or empty
 *       scalar becomes null, a plain true/false a boolean, every other scalar a string;
 *       written only on success
 * @err: code 7 naming @origin, the line and libyaml's reason when it does not parse;
 *       also for aliases, non-string keys, a key given twice, nesting deeper than 64 and
 *       more than one document
 *
 * Return: 0 on success, negative errno on failure.
 */
int api_yaml_parse(const char *buf, size_t len, const char *origin, struct json_object **ret,
		   struct cni_err *err);
