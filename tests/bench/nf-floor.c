/*
 * The kernel's own share of a netfilter plugin's run, measured in one process: what any
 * nftables change costs (one batch sent and its socket closed: the close waits for the
 * kernel to free the transaction, an RCU grace period), and one dump of the conntrack
 * table (portmap's UDP mappings). Run in the netns the plugins run in; prints medians.
 *
 * Usage: nf-floor [ITERATIONS]
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/netfilter/conntrack.h"
#include "common/netfilter/nft.h"
#include "common/util/error.h"

static int64_t now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* One batch: the table made (even), or deleted (odd), so that each run changes something. */
static int commit(int i)
{
	struct cni_err err = { 0 };
	struct nft_batch *b;
	int r;

	if (nft_batch_new(&b) < 0)
		return -ENOMEM;
	r = i % 2 ? nft_batch_delete_table(b, NFT_FAMILY_IP, "nffloor") :
		    nft_batch_add_table(b, NFT_FAMILY_IP, "nffloor", NULL);
	if (r >= 0)
		r = nft_batch_commit(b, &err);
	nft_batch_free(b);
	if (r < 0)
		fprintf(stderr, "nf-floor: %s\n", err.msg);
	return r;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	int64_t *batch, *dump;

	if (n < 2)
		n = 2;
	n += n % 2;
	batch = calloc((size_t)n, sizeof(*batch));
	dump = calloc((size_t)n, sizeof(*dump));
	if (!batch || !dump)
		return 2;
	for (int i = 0; i < n; i++) {
		struct cni_err err = { 0 };
		int64_t t0 = now_us();

		if (commit(i) < 0)
			return 1;
		batch[i] = now_us() - t0;
		t0 = now_us();
		if (ct_delete_dports(AF_INET, IPPROTO_UDP, (const uint16_t[]){ 9 }, 1, NULL, &err) < 0) {
			fprintf(stderr, "nf-floor: %s\n", err.msg);
			return 1;
		}
		dump[i] = now_us() - t0;
	}
	qsort(batch, (size_t)n, sizeof(*batch), cmp);
	qsort(dump, (size_t)n, sizeof(*dump), cmp);
	printf("kernel floor, median of %d in one process: an nftables batch %lld us, a conntrack "
	       "dump %lld us\n", n, (long long)batch[n / 2], (long long)dump[n / 2]);
	printf("{\"nft_batch_us\":%lld,\"conntrack_dump_us\":%lld}\n", (long long)batch[n / 2],
	       (long long)dump[n / 2]);
	free(batch);
	free(dump);
	return 0;
}
