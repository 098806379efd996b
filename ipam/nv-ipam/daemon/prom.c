/* Prometheus' text format for the daemons' /metrics: families, samples, the process's own */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ipam/nv-ipam/daemon/prom.h"

void prom_family(struct text_buf *b, const char *name, const char *type, const char *help)
{
	char line[512];

	snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	text_buf_puts(b, line);
}

void prom_sample(struct text_buf *b, const char *name, const char *labels, double v)
{
	char line[256];

	snprintf(line, sizeof(line), "%s%s %.12g\n", name, labels, v);
	text_buf_puts(b, line);
}

void prom_label(struct text_buf *b, const char *key, const char *val)
{
	text_buf_puts(b, key);
	text_buf_puts(b, "=\"");
	for (const char *p = val; *p; p++) {
		if (*p == '\\' || *p == '"')
			text_buf_putc(b, '\\');
		if (*p == '\n')
			text_buf_puts(b, "\\n");
		else
			text_buf_putc(b, *p);
	}
	text_buf_putc(b, '"');
}

/* The process's CPU seconds and resident bytes, from /proc/self/stat. */
static void process_stats(double *ret_cpu, double *ret_rss)
{
	char buf[1024], *p;
	unsigned long utime = 0, stime = 0;
	long rss = 0;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n;

	*ret_cpu = *ret_rss = 0;
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields after the command's closing parenthesis: utime is the 12th, rss the 22nd. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d "
			 "%*d %*d %*u %*u %ld", &utime, &stime, &rss) != 3)
		return;
	*ret_cpu = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
	*ret_rss = (double)rss * (double)sysconf(_SC_PAGESIZE);
}

void prom_process(struct text_buf *b, time_t started)
{
	double cpu, rss;

	process_stats(&cpu, &rss);
	prom_family(b, "process_cpu_seconds_total", "counter", "User and system CPU time spent in seconds.");
	prom_sample(b, "process_cpu_seconds_total", "", cpu);
	prom_family(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
	prom_sample(b, "process_resident_memory_bytes", "", rss);
	prom_family(b, "process_start_time_seconds", "gauge",
		    "Start time of the process since unix epoch in seconds.");
	prom_sample(b, "process_start_time_seconds", "", (double)started);
}

void prom_connections(struct text_buf *b, const char *prefix, const struct prom_server *v, size_t n)
{
	char name[128], labels[96];

	snprintf(name, sizeof(name), "%s_http_connections", prefix);
	prom_family(b, name, "gauge", "Connections holding a slot of an HTTP server.");
	for (size_t i = 0; i < n; i++) {
		snprintf(labels, sizeof(labels), "{server=\"%s\"}", v[i].name);
		if (v[i].up)
			prom_sample(b, name, labels, (double)v[i].st.open);
	}
	snprintf(name, sizeof(name), "%s_http_connections_refused_total", prefix);
	prom_family(b, name, "counter",
		    "Connections an HTTP server closed at once: their address held its share "
		    "(address), or every slot was taken and none was fairly theirs (full).");
	for (size_t i = 0; i < n; i++) {
		if (!v[i].up)
			continue;
		snprintf(labels, sizeof(labels), "{server=\"%s\",reason=\"address\"}", v[i].name);
		prom_sample(b, name, labels, (double)v[i].st.refused_address);
		snprintf(labels, sizeof(labels), "{server=\"%s\",reason=\"full\"}", v[i].name);
		prom_sample(b, name, labels, (double)v[i].st.refused_full);
	}
	snprintf(name, sizeof(name), "%s_http_connections_evicted_total", prefix);
	prom_family(b, name, "counter",
		    "Connections an HTTP server closed to give their slot to a client holding fewer.");
	for (size_t i = 0; i < n; i++) {
		snprintf(labels, sizeof(labels), "{server=\"%s\"}", v[i].name);
		if (v[i].up)
			prom_sample(b, name, labels, (double)v[i].st.evicted);
	}
}
