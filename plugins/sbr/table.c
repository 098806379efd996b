/* sbr routing tables: the first id nothing uses */
#include <stdbool.h>

#include <linux/rtnetlink.h>

#include "plugins/sbr/table.h"

static bool table_taken(const uint32_t *used, size_t n, uint32_t id)
{
	if (id == RT_TABLE_UNSPEC || id == RT_TABLE_DEFAULT || id == RT_TABLE_MAIN ||
	    id == RT_TABLE_LOCAL)
		return true;
	for (size_t i = 0; i < n; i++)
		if (used[i] == id)
			return true;
	return false;
}

uint32_t sbr_table_next(const uint32_t *used, size_t n, uint32_t from)
{
	/* Only taken ids are stepped over: at most n + 4 of them. */
	for (uint32_t id = from ? from : 1; id != 0; id++)
		if (!table_taken(used, n, id))
			return id;
	return 0;
}
