/*
 * Connection slots of a server: shared fairly among client subnets and addresses, never all to a few
 *
 * A limit per address alone leaves the server to whoever has a few addresses: four of
 * them at a quarter each, reconnecting as soon as a connection closes, hold every slot,
 * and a probe waits for one of them to end. So when the server is full a newcomer is
 * weighed against the heaviest holder: the subnet holding the most slots gives one up
 * (its heaviest address's oldest connection) to a subnet holding at least two fewer, or
 * none; within one subnet, addresses are weighed the same way. Equal holders never take
 * slots from each other (no churn among the attackers), and a client that holds nothing
 * (a kubelet, Prometheus, the API server) always gets one. The subnet is what one pod or
 * host can take addresses from: an IPv4 /24, an IPv6 /64.
 *
 * Evicting is shutting the socket down (never closing it: its server owns it), under the
 * lock its close notification takes, as the deadlines do.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ipam/nv-ipam/serve/slots.h"

/* A family byte, then the address (4 or 16 bytes), masked to its subnet for a subnet. */
#define KEY_LEN 17

struct holder {
	unsigned char key[KEY_LEN];
	unsigned int n;     /* slots held */
	struct holder *net; /* an address's subnet; NULL for a subnet */
};

struct slot {
	struct slot *prev, *next; /* the slots held, oldest first */
	struct holder *addr;
	int fd;
	bool held; /* false once evicted */
};

struct slots {
	pthread_mutex_t lock;
	struct slot *head, *tail;
	/* Holders of at least one slot, and at most the newcomer's with none: limit + 1 each. */
	struct holder **addrs, **nets;
	size_t n_addrs, n_nets;
	unsigned int limit, per_address;
	struct slots_stats st;
};

int slots_new(unsigned int limit, unsigned int per_address, struct slots **ret)
{
	struct slots *s = calloc(1, sizeof(*s));

	*ret = NULL;
	if (!s)
		return -ENOMEM;
	s->addrs = calloc((size_t)limit + 1, sizeof(*s->addrs));
	s->nets = calloc((size_t)limit + 1, sizeof(*s->nets));
	if (!s->addrs || !s->nets) {
		free(s->addrs);
		free(s->nets);
		free(s);
		return -ENOMEM;
	}
	s->limit = limit;
	s->per_address = per_address;
	pthread_mutex_init(&s->lock, NULL);
	*ret = s;
	return 0;
}

/* The address's key and its subnet's; an IPv4 client of a dual-stack socket counts as IPv4. */
static void keys_of(const struct sockaddr *sa, socklen_t len, unsigned char addr[KEY_LEN],
		    unsigned char net[KEY_LEN])
{
	memset(addr, 0, KEY_LEN);
	memset(net, 0, KEY_LEN);
	/* Copied out, not cast: a struct sockaddr promises no sockaddr_in6's alignment. */
	if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;

		memcpy(&in6, sa, sizeof(in6));
		if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
			addr[0] = 4;
			memcpy(addr + 1, in6.sin6_addr.s6_addr + 12, 4);
			memcpy(net, addr, 4);
		} else {
			addr[0] = 6;
			memcpy(addr + 1, in6.sin6_addr.s6_addr, 16);
			memcpy(net, addr, 9);
		}
	} else if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		struct sockaddr_in in4;

		memcpy(&in4, sa, sizeof(in4));
		addr[0] = 4;
		memcpy(addr + 1, &in4.sin_addr, 4);
		memcpy(net, addr, 4);
	}
}

/* The holder of @key in @v, made (with no slot) when there is none; NULL when out of memory. */
static struct holder *holder_get(struct holder **v, size_t *n, const unsigned char key[KEY_LEN])
{
	struct holder *h;

	for (size_t i = 0; i < *n; i++)
		if (memcmp(v[i]->key, key, KEY_LEN) == 0)
			return v[i];
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	memcpy(h->key, key, KEY_LEN);
	v[(*n)++] = h;
	return h;
}

/* A holder left with no slot goes. */
static void holder_put(struct holder **v, size_t *n, struct holder *h)
{
	if (h->n)
		return;
	for (size_t i = 0; i < *n; i++) {
		if (v[i] != h)
			continue;
		v[i] = v[--*n];
		free(h);
		return;
	}
}

static void take(struct slots *s, struct slot *c)
{
	c->held = true;
	c->addr->n++;
	c->addr->net->n++;
	c->prev = s->tail;
	c->next = NULL;
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	s->st.open++;
}

static void drop(struct slots *s, struct slot *c)
{
	struct holder *addr = c->addr, *net = addr->net;

	if (c->prev)
		c->prev->next = c->next;
	else
		s->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		s->tail = c->prev;
	c->prev = c->next = NULL;
	c->held = false;
	addr->n--;
	net->n--;
	s->st.open--;
	holder_put(s->addrs, &s->n_addrs, addr);
	holder_put(s->nets, &s->n_nets, net);
}

/* Whether a holder of @mine slots may take one from a holder of @top: it ends up the lighter. */
static bool lighter(unsigned int mine, unsigned int top)
{
	return mine == 0 || mine + 1 < top;
}

/* The heaviest of @v; of addresses, only those of @net. */
static struct holder *heaviest(struct holder *const *v, size_t n, const struct holder *net)
{
	struct holder *top = NULL;

	for (size_t i = 0; i < n; i++)
		if ((!net || v[i]->net == net) && (!top || v[i]->n > top->n))
			top = v[i];
	return top;
}

/* The slot to give up for a newcomer at @addr, or NULL when it gets none. */
static struct slot *victim(struct slots *s, const struct holder *addr)
{
	struct holder *net = addr->net, *top_net = heaviest(s->nets, s->n_nets, NULL), *top;

	if (top_net != net && lighter(net->n, top_net->n))
		top = heaviest(s->addrs, s->n_addrs, top_net);
	else if (!(top = heaviest(s->addrs, s->n_addrs, net)) || top == addr ||
		 !lighter(addr->n, top->n))
		return NULL;
	for (struct slot *c = s->head; c; c = c->next)
		if (c->addr == top)
			return c;
	return NULL;
}

struct slot *slots_admit(struct slots *s, int fd, const struct sockaddr *sa, socklen_t len)
{
	unsigned char akey[KEY_LEN], nkey[KEY_LEN];
	struct slot *c = calloc(1, sizeof(*c)), *v = NULL;
	struct holder *net = NULL;

	keys_of(sa, len, akey, nkey);
	pthread_mutex_lock(&s->lock);
	if (c)
		net = holder_get(s->nets, &s->n_nets, nkey);
	if (net && (c->addr = holder_get(s->addrs, &s->n_addrs, akey)))
		c->addr->net = net;
	if (!c || !c->addr) {
		/* Out of memory: a connection that cannot be counted is not served. */
		s->st.refused_full++;
	} else if (c->addr->n >= s->per_address) {
		s->st.refused_address++;
	} else if (s->st.open < s->limit || (v = victim(s, c->addr))) {
		c->fd = fd;
		/* Taken first: the victim may share the newcomer's subnet, which then keeps a slot. */
		take(s, c);
		s->st.accepted++;
		if (v) {
			(void)shutdown(v->fd, SHUT_RDWR);
			drop(s, v);
			s->st.evicted++;
		}
		pthread_mutex_unlock(&s->lock);
		return c;
	} else {
		s->st.refused_full++;
	}
	if (c && c->addr)
		holder_put(s->addrs, &s->n_addrs, c->addr);
	if (net)
		holder_put(s->nets, &s->n_nets, net);
	pthread_mutex_unlock(&s->lock);
	free(c);
	(void)shutdown(fd, SHUT_RDWR);
	return NULL;
}

void slots_release(struct slots *s, struct slot *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	if (c->held)
		drop(s, c);
	pthread_mutex_unlock(&s->lock);
	free(c);
}

void slots_stats(struct slots *s, struct slots_stats *ret)
{
	*ret = (struct slots_stats){ 0 };
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*ret = s->st;
	pthread_mutex_unlock(&s->lock);
}

void slots_free(struct slots *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_addrs; i++)
		free(s->addrs[i]);
	for (size_t i = 0; i < s->n_nets; i++)
		free(s->nets[i]);
	free(s->addrs);
	free(s->nets);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
