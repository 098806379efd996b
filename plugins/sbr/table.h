/* sbr routing tables: the first id nothing uses */
#pragma once

#include <stddef.h>
#include <stdint.h>

/**
 * sbr_table_next() - the first table id from @from on that no rule or route uses
 * @used: the ids rules point at and routes live in (any order, repeats allowed)
 * @n: number of entries
 * @from: the first candidate
 *
 * The kernel's own tables (0 unspec, 253 default, 254 main, 255 local) are
 * never chosen, even when empty.
 *
 * Return: the id, 0 when every id from @from to 2^32-1 is taken.
 */
uint32_t sbr_table_next(const uint32_t *used, size_t n, uint32_t from);
