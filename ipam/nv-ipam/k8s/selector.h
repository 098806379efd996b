/* Kubernetes NodeSelector: validating a pool's selector and matching nodes */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct cni_err;
struct json_object;

/**
 * selector_validate() - check a core/v1 NodeSelector
 * @sel: the "nodeSelector" object
 * @err: code 7 with the reason, on failure
 *
 * Return: 0 when valid, -EINVAL otherwise.
 */
int selector_validate(struct json_object *sel, struct cni_err *err);

/**
 * selector_match() - whether a node matches (terms ORed, requirements ANDed)
 * @sel: validated selector, NULL matches every node
 * @name: node name (for matchFields on metadata.name)
 * @labels: the node's labels object, NULL when it has none
 *
 * A term without requirements matches nothing, as in Kubernetes.
 *
 * Return: true on a match.
 */
bool selector_match(struct json_object *sel, const char *name, struct json_object *labels);
