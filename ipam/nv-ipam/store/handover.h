/* The store rendered in the reference daemon's format (private to store/) */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ipam/nv-ipam/store/migrate.h"

struct cni_err;
struct nvipam_store;
struct text_buf;

/**
 * store_handover_render() - the whole store as the reference daemon's store file
 * @s: store opened whole
 * @b: buffer it is appended to
 * @ret_sum: the file's checksum
 *
 * Return: 0, -ENOMEM.
 */
int store_handover_render(const struct nvipam_store *s, struct text_buf *b, uint32_t *ret_sum);

