/* One DHCP lease the daemon holds: acquired, renewed and released by a thread of its own */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/cni/result.h"
#include "common/util/cleanup.h"
#include "common/util/log.h"
#include "ipam/dhcp/lease.h"
#include "ipam/dhcp/rawsock.h"

enum lease_state { ACQUIRING, BOUND, FAILED, ENDED };

/* RFC 2131's backoff as upstream paces it: four quick tries 2 s apart, then 4 s doubling. */
#define FAST_DELAY_MS 2000
#define FAST_TRIES 4
#define SLOW_DELAY0_MS 4000
#define JITTER_MS 1000

struct dhcp_lease {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int refs;
	enum lease_state state;
	bool stopping;
	struct cni_err err;
	int wake[2];

	struct dhcp_req req;
	uint8_t cid[DHCP_CLIENT_ID_MAX + 1];  /* option 61: type 0, then the ID */
	size_t cid_len;
	int netns_fd;
	const struct dhcp_timing *t;
	struct dhcp_sock sock;

	/* The thread's own once bound; read by others under mu once state is BOUND. */
	struct dhcp_reply ack;
	uint32_t addr;
	uint32_t server;
	struct dhcp_times times;
	int64_t bound_ms;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t random32(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)now_ms() * 2654435761u;
	return v;
}

static int64_t jitter(int64_t ms)
{
	return ms - JITTER_MS + (int64_t)(random32() % (2 * JITTER_MS));
}

/* Drain a wake-up. Return: -ECANCELED when the lease is being stopped, else 1. */
static int woken(struct dhcp_lease *l)
{
	char buf[64];
	bool stop;

	while (read(l->wake[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&l->mu);
	stop = l->stopping;
	pthread_mutex_unlock(&l->mu);
	return stop ? -ECANCELED : 1;
}

/* Sleep until @deadline. Return: 0 then, 1 when poked, -ECANCELED when stopped. */
static int sleep_until(struct dhcp_lease *l, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = l->wake[0], .events = POLLIN };
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
		if (r > 0)
			return woken(l);
	}
}

static int send_msg(struct dhcp_lease *l, uint8_t type, uint32_t xid, uint32_t ciaddr,
		    uint32_t requested, uint32_t server, uint32_t dst)
{
	uint8_t buf[DHCP_MSG_MAX];
	struct dhcp_build b = {
		.type = type,
		.xid = xid,
		.broadcast = l->t->broadcast,
		.ciaddr = ciaddr,
		.requested_ip = requested,
		.server_id = server,
		.client_id = l->cid,
		.client_id_len = l->cid_len,
		.opts = l->req.opts,
		.n_opts = l->req.n_opts,
		.params = l->req.params,
		.n_params = l->req.n_params,
	};
	size_t len = 0;
	int r;

	memcpy(b.chaddr, l->sock.mac, 6);
	if ((r = dhcp_msg_build(&b, buf, sizeof(buf), &len)) < 0)
		return r;
	return dhcp_sock_send(&l->sock, ciaddr, dst, buf, len);
}

/* A reply of this exchange and of one of the wanted types, within the timeout. */
static int await(struct dhcp_lease *l, uint32_t xid, uint8_t want1, uint8_t want2,
		 struct dhcp_reply *ret)
{
	int64_t end = now_ms() + l->t->timeout_ms;
	uint8_t buf[DHCP_MSG_MAX];

	for (;;) {
		int64_t left = end - now_ms();
		size_t len = 0;
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = dhcp_sock_recv(&l->sock, l->wake[0], (int)left, buf, sizeof(buf), &len);
		if (r == -EINTR) {
			if ((r = woken(l)) < 0)
				return r;
			continue;
		}
		if (r < 0)
			return r;
		if (dhcp_msg_parse(buf, len, ret) < 0 || ret->xid != xid ||
		    memcmp(ret->chaddr, l->sock.mac, 6) != 0 || (ret->type != want1 && ret->type != want2))
			continue;
		return 0;
	}
}

static bool usable_addr(uint32_t a_net)
{
	uint32_t a = ntohl(a_net);

	return a != 0 && (a >> 24) != 0 && (a >> 24) != 127 && (a >> 28) < 0xe;
}

/* DISCOVER, OFFER, REQUEST, ACK: one try. */
static int exchange(struct dhcp_lease *l, struct dhcp_reply *ret, const char **why)
{
	static const uint32_t bcast = 0xffffffffu;
	uint32_t xid = random32(), offered, server;
	int r;

	*why = "no offer";
	if ((r = send_msg(l, DHCP_DISCOVER, xid, 0, 0, 0, bcast)) < 0)
		return r;
	for (;;) {
		if ((r = await(l, xid, DHCP_OFFER, 0, ret)) < 0)
			return r;
		if (usable_addr(ret->yiaddr) && ret->server_id)
			break;
	}
	offered = ret->yiaddr;
	server = ret->server_id;
	*why = "no answer to the request";
	if ((r = send_msg(l, DHCP_REQUEST, xid, 0, offered, server, bcast)) < 0 ||
	    (r = await(l, xid, DHCP_ACK, DHCP_NAK, ret)) < 0)
		return r;
	/* An ACK without option 54 is the server's that offered. */
	if (!ret->server_id)
		ret->server_id = server;
	if (ret->type == DHCP_NAK) {
		*why = "DHCPNAK";
		return -EAGAIN;
	}
	if (!usable_addr(ret->yiaddr)) {
		*why = "an ACK without a usable address";
		return -EAGAIN;
	}
	return 0;
}

/* Where renewals and the release go: the server, or everyone when it never named itself. */
static uint32_t server_or_all(const struct dhcp_lease *l)
{
	return l->server ? l->server : 0xffffffffu;
}

/* REQUEST from the bound address (RENEWING): one try. */
static int renew(struct dhcp_lease *l, struct dhcp_reply *ret)
{
	uint32_t xid = random32();
	int r;

	if ((r = send_msg(l, DHCP_REQUEST, xid, l->addr, 0, 0, server_or_all(l))) < 0 ||
	    (r = await(l, xid, DHCP_ACK, DHCP_NAK, ret)) < 0)
		return r;
	if (ret->type == DHCP_NAK || ret->yiaddr != l->addr)
		return -EAGAIN;
	return 0;
}

static void commit(struct dhcp_lease *l, const struct dhcp_reply *ack)
{
	char a[INET_ADDRSTRLEN], s[INET_ADDRSTRLEN];

	pthread_mutex_lock(&l->mu);
	l->ack = *ack;
	l->addr = ack->yiaddr;
	if (ack->server_id)
		l->server = ack->server_id;
	dhcp_lease_times(ack, &l->times);
	l->bound_ms = now_ms();
	pthread_mutex_unlock(&l->mu);
	if (ack->bad_classless)
		log_warning("%s: option 121 (classless routes) malformed or too long: ignored", l->req.client_id);
	if (ack->has_lease && ack->lease_s != l->times.lease_s)
		log_warning("%s: lease time %u s taken as %u s", l->req.client_id, ack->lease_s, l->times.lease_s);
	log_info("%s: lease of %s from %s for %u s (renewal in %u s)", l->req.client_id,
		 inet_ntop(AF_INET, &l->addr, a, sizeof(a)), inet_ntop(AF_INET, &l->server, s, sizeof(s)),
		 l->times.lease_s, l->times.t1_s);
}

/* Tries with upstream's backoff until one succeeds or -resendtimeout has passed. */
static int acquire(struct dhcp_lease *l, struct dhcp_reply *ack)
{
	int64_t end = now_ms() + l->t->resend_timeout_ms, slow = SLOW_DELAY0_MS;
	const char *why = "";
	int tries = 0, r;

	for (;;) {
		int64_t delay;

		r = exchange(l, ack, &why);
		if (r == 0 || r == -ECANCELED)
			return r;
		if (r != -ETIMEDOUT && r != -EAGAIN) {
			cni_err_set(&l->err, CNI_ERR_IO, r, "error calling DHCP.Allocate: %s: %s", l->req.client_id,
				    strerror(-r));
			return r;
		}
		tries++;
		if (tries <= FAST_TRIES) {
			delay = jitter(FAST_DELAY_MS);
		} else {
			delay = jitter(slow);
			if (slow < l->t->resend_max_ms)
				slow *= 2;
		}
		log_info("%s: %s; retrying in %lld ms", l->req.client_id, why, (long long)delay);
		if (now_ms() + delay > end) {
			cni_err_set(&l->err, CNI_ERR_TRY_AGAIN, -ETIMEDOUT,
				    "error calling DHCP.Allocate: no more tries: %d tries in %lld s on %s, "
				    "the last: %s", tries, (long long)(l->t->resend_timeout_ms / 1000),
				    l->req.ifname, why);
			return -ETIMEDOUT;
		}
		if ((r = sleep_until(l, now_ms() + delay)) < 0)
			return r;
	}
}

static void release(struct dhcp_lease *l)
{
	int r = send_msg(l, DHCP_RELEASE, random32(), l->addr, 0, l->server, server_or_all(l));

	if (r < 0)
		log_warning("%s: failed to send DHCPRELEASE: %s", l->req.client_id, strerror(-r));
	else
		log_info("%s: lease released", l->req.client_id);
}

static void set_state(struct dhcp_lease *l, enum lease_state s)
{
	pthread_mutex_lock(&l->mu);
	l->state = s;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->mu);
}

/* Bound, renewing from T1, rebinding from T2, expired: the link set down, as upstream. */
static void maintain(struct dhcp_lease *l)
{
	struct dhcp_reply *reply = malloc(sizeof(*reply));
	int64_t retry_at = 0, slow = SLOW_DELAY0_MS;
	const char *why = "";

	if (!reply)
		return;
	for (;;) {
		int64_t now = now_ms(), t1 = l->bound_ms + (int64_t)l->times.t1_s * 1000,
			t2 = l->bound_ms + (int64_t)l->times.t2_s * 1000,
			expiry = l->bound_ms + (int64_t)l->times.lease_s * 1000;
		int r;

		if (dhcp_sock_link_exists(&l->sock) == 0) {
			log_info("%s: interface %s no longer exists: the lease is no longer kept", l->req.client_id,
				 l->req.ifname);
			break;
		}
		if (now < t1 || now < retry_at) {
			r = sleep_until(l, now < t1 ? t1 : retry_at);
			if (r == -ECANCELED) {
				release(l);
				break;
			}
			continue;
		}
		if (now >= expiry) {
			log_warning("%s: lease expired, bringing interface %s down", l->req.client_id, l->req.ifname);
			dhcp_sock_link_down(&l->sock);
			break;
		}
		r = now < t2 ? renew(l, reply) : exchange(l, reply, &why);
		if (r == -ECANCELED) {
			release(l);
			break;
		}
		if (r == 0) {
			commit(l, reply);
			retry_at = 0;
			slow = SLOW_DELAY0_MS;
			continue;
		}
		log_info("%s: %s failed; retrying", l->req.client_id, now < t2 ? "renewal" : "rebinding");
		retry_at = now_ms() + jitter(slow);
		if (slow < l->t->resend_max_ms)
			slow *= 2;
	}
	free(reply);
}

static void *lease_thread(void *arg)
{
	struct dhcp_lease *l = arg;
	struct dhcp_reply *ack = malloc(sizeof(*ack));
	int r;

	/* The thread lives in the container's netns: its sockets and link lookups are there. */
	if (!ack) {
		r = cni_err_set(&l->err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	} else if (setns(l->netns_fd, CLONE_NEWNET) < 0) {
		r = cni_err_set(&l->err, CNI_ERR_INVALID_NETNS, -errno, "error entering netns %.256s: %s",
				l->req.netns, strerror(errno));
	} else if ((r = dhcp_sock_open(l->req.ifname, &l->sock)) < 0) {
		cni_err_set(&l->err, r == -ENODEV ? CNI_ERR_NOT_FOUND : CNI_ERR_IO, r,
			    "error looking up \"%s\": %s", l->req.ifname,
			    r == -ENODEV ? "Link not found" : strerror(-r));
	} else if ((r = acquire(l, ack)) == 0 && !ack->has_mask) {
		/* Upstream keeps no lease it cannot give as an address: released at once. */
		pthread_mutex_lock(&l->mu);
		l->addr = ack->yiaddr;
		l->server = ack->server_id;
		pthread_mutex_unlock(&l->mu);
		release(l);
		r = cni_err_set(&l->err, CNI_ERR_IO, -EBADMSG,
				ack->bad_mask ? "DHCP option Subnet Mask in DHCPACK is not a contiguous mask"
					      : "DHCP option Subnet Mask not found in DHCPACK");
	}
	if (r == -ECANCELED)
		cni_err_set(&l->err, CNI_ERR_TRY_AGAIN, r, "the lease was released while being acquired");
	if (r == 0) {
		commit(l, ack);
		set_state(l, BOUND);
		maintain(l);
	}
	free(ack);
	/*
	 * Ended before the socket is closed: closing a packet socket waits for an RCU grace
	 * period (17 ms here), which the DEL waiting on this state need not.
	 */
	set_state(l, r == 0 ? ENDED : FAILED);
	if (l->sock.fd >= 0)
		close(l->sock.fd);
	l->sock.fd = -1;
	dhcp_lease_unref(l);
	return NULL;
}

int dhcp_lease_start(const struct dhcp_req *req, int netns_fd, const struct dhcp_timing *timing,
		     struct dhcp_lease **ret)
{
	struct dhcp_lease *l = calloc(1, sizeof(*l));
	pthread_t thread;
	size_t n;
	int r;

	if (!l) {
		close(netns_fd);
		return -ENOMEM;
	}
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->refs = 2; /* the caller's and the thread's */
	l->req = *req;
	l->netns_fd = netns_fd;
	l->t = timing;
	l->sock.fd = -1;
	l->wake[0] = l->wake[1] = -1;
	n = strlen(req->client_id);
	l->cid[0] = 0; /* upstream's type: not a hardware address */
	memcpy(l->cid + 1, req->client_id, n);
	l->cid_len = n + 1;
	if (pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		goto fail;
	}
	r = -pthread_create(&thread, NULL, lease_thread, l);
	if (r < 0)
		goto fail;
	/* Waited for by its state, not joined: it still closes its socket after it ends. */
	pthread_detach(thread);
	*ret = l;
	return 0;
fail:
	l->refs = 1;
	dhcp_lease_unref(l);
	return r;
}

int dhcp_lease_wait(struct dhcp_lease *l, struct cni_err *err)
{
	int r = 0;

	pthread_mutex_lock(&l->mu);
	while (l->state == ACQUIRING)
		pthread_cond_wait(&l->cond, &l->mu);
	if (l->state != BOUND) {
		*err = l->err;
		if (!err->code)
			cni_err_set(err, CNI_ERR_TRY_AGAIN, -ESRCH, "the lease ended");
		r = err->errnum < 0 ? err->errnum : -EIO;
	}
	pthread_mutex_unlock(&l->mu);
	return r;
}

bool dhcp_lease_usable(struct dhcp_lease *l)
{
	bool ok;

	pthread_mutex_lock(&l->mu);
	ok = l->state == ACQUIRING || l->state == BOUND;
	pthread_mutex_unlock(&l->mu);
	return ok;
}

static int add_route(struct cni_result *res, uint32_t dst, unsigned int len, uint32_t gw,
		     int priority)
{
	struct cni_route r = { .dst = { .addr = { .family = AF_INET }, .len = len },
			       .priority = priority, .scope = -1 };

	memcpy(r.dst.addr.bytes, &dst, 4);
	if (gw) {
		r.has_gw = true;
		r.gw.family = AF_INET;
		memcpy(r.gw.bytes, &gw, 4);
	} else {
		r.scope = 253; /* RT_SCOPE_LINK: on the link, as upstream marks a route without router */
	}
	return cni_result_add_route(res, &r);
}

int dhcp_lease_result(struct dhcp_lease *l, int priority, struct cni_result *ret,
		      struct cni_err *err)
{
	struct cni_ip ip = { .iface = -1 };
	const struct dhcp_reply *a = &l->ack;
	int r = 0;

	pthread_mutex_lock(&l->mu);
	ip.address.addr.family = AF_INET;
	memcpy(ip.address.addr.bytes, &l->addr, 4);
	ip.address.len = a->prefix_len;
	if (a->router) {
		ip.has_gateway = true;
		ip.gateway.family = AF_INET;
		memcpy(ip.gateway.bytes, &a->router, 4);
		if (!ip_prefix_contains(&ip.address, &ip.gateway))
			log_warning("%s: the router is outside the leased subnet (passed on as upstream does)",
				    l->req.client_id);
	}
	r = cni_result_add_ip(ret, &ip);
	/* RFC 3442: with classless routes, option 33 and the router option give no routes. */
	for (size_t i = 0; r >= 0 && i < a->n_classless; i++)
		r = add_route(ret, a->classless[i].dst, a->classless[i].len, a->classless[i].gw, priority);
	for (size_t i = 0; r >= 0 && !a->n_classless && i < a->n_static; i++)
		r = add_route(ret, a->statics[i].dst, a->statics[i].len, a->statics[i].gw, priority);
	if (r >= 0 && !a->n_classless && a->router)
		r = add_route(ret, 0, 0, a->router, priority);
	pthread_mutex_unlock(&l->mu);
	if (r < 0)
		return cni_err_set(err, CNI_ERR_INTERNAL, -ENOMEM, "out of memory");
	return 0;
}

void dhcp_lease_poke(struct dhcp_lease *l)
{
	ssize_t n = write(l->wake[1], "c", 1);

	(void)n; /* a full pipe already wakes it */
}

void dhcp_lease_stop(struct dhcp_lease *l)
{
	pthread_mutex_lock(&l->mu);
	l->stopping = true;
	pthread_mutex_unlock(&l->mu);
	dhcp_lease_poke(l);
	pthread_mutex_lock(&l->mu);
	while (l->state == ACQUIRING || l->state == BOUND)
		pthread_cond_wait(&l->cond, &l->mu);
	pthread_mutex_unlock(&l->mu);
}

const char *dhcp_lease_client_id(const struct dhcp_lease *l)
{
	return l->req.client_id;
}

struct dhcp_lease *dhcp_lease_ref(struct dhcp_lease *l)
{
	__atomic_add_fetch(&l->refs, 1, __ATOMIC_SEQ_CST);
	return l;
}

void dhcp_lease_unref(struct dhcp_lease *l)
{
	if (!l || __atomic_sub_fetch(&l->refs, 1, __ATOMIC_SEQ_CST) > 0)
		return;
	if (l->wake[0] >= 0)
		close(l->wake[0]);
	if (l->wake[1] >= 0)
		close(l->wake[1]);
	if (l->netns_fd >= 0)
		close(l->netns_fd);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->mu);
	free(l);
}
