/* Prometheus' text format for the daemons' /metrics: families, samples, the process's own */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/util/text.h"
#include "ipam/nv-ipam/serve/slots.h"

/* One of the daemon's HTTP servers, by the name its samples carry. */
struct prom_server {
	const char *name; /* "probes", "metrics", "webhook" */
	bool up;          /* false: not started (or served by another): no samples */
	struct slots_stats st; /* serve_connections() */
};

/**
 * prom_family() - a family's HELP and TYPE lines
 * @b: the page
 * @name: the metric's name
 * @type: "counter" or "gauge"
 * @help: one line of text, the code's own words
 */
void prom_family(struct text_buf *b, const char *name, const char *type, const char *help);

/**
 * prom_sample() - one sample line
 * @b: the page
 * @name: the metric's name
 * @labels: "" or "{k=\"v\",...}" made of the code's own words
 * @v: the value
 */
void prom_sample(struct text_buf *b, const char *name, const char *labels, double v);

/**
 * prom_label() - one label, its value escaped as the format wants
 * @b: the page
 * @key: the label's name
 * @val: any text (backslash, quote and newline are escaped)
 */
void prom_label(struct text_buf *b, const char *key, const char *val);

/**
 * prom_process() - the process_* families every Go exporter has
 * @b: the page
 * @started: when the process started
 *
 * CPU seconds and resident bytes are read from /proc/self/stat (0 when unreadable).
 */
void prom_process(struct text_buf *b, time_t started);

/**
 * prom_connections() - the connection slots of the daemon's HTTP servers: open, refused
 *                      (by reason) and evicted
 * @b: the page
 * @prefix: the daemon's metric prefix ("nv_ipam_node")
 * @v: the servers
 * @n: how many
 */
void prom_connections(struct text_buf *b, const char *prefix, const struct prom_server *v, size_t n);
