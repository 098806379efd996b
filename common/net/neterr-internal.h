/* What common/net/neterr.c lets tests read: the kernel's text it keeps */
#pragma once

/**
 * net_ack_last() - the kernel's extended-ack text of the last failed request
 *
 * Return: the text, "" when the kernel gave none. Valid until the next request.
 */
const char *net_ack_last(void);
