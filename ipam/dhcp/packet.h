/* DHCPv4 messages: the client's built, the server's read with every length checked */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dhcp_msg_type {
	DHCP_DISCOVER = 1,
	DHCP_OFFER = 2,
	DHCP_REQUEST = 3,
	DHCP_DECLINE = 4,
	DHCP_ACK = 5,
	DHCP_NAK = 6,
	DHCP_RELEASE = 7,
};

enum {
	DHCP_OPT_PAD = 0,
	DHCP_OPT_SUBNET_MASK = 1,
	DHCP_OPT_ROUTER = 3,
	DHCP_OPT_HOST_NAME = 12,
	DHCP_OPT_STATIC_ROUTES = 33,
	DHCP_OPT_REQUESTED_IP = 50,
	DHCP_OPT_LEASE_TIME = 51,
	DHCP_OPT_MSG_TYPE = 53,
	DHCP_OPT_SERVER_ID = 54,
	DHCP_OPT_PARAM_LIST = 55,
	DHCP_OPT_RENEWAL_TIME = 58,
	DHCP_OPT_REBINDING_TIME = 59,
	DHCP_OPT_VENDOR_CLASS = 60,
	DHCP_OPT_CLIENT_ID = 61,
	DHCP_OPT_USER_CLASS = 77,
	DHCP_OPT_CLASSLESS_ROUTES = 121,
	DHCP_OPT_END = 255,
};

/* Largest DHCP payload read or written: a jumbo frame's worth, more than any server sends. */
#define DHCP_MSG_MAX 9000
/* Routes read from one reply; a list longer than this is refused as a malformed option is. */
#define DHCP_ROUTES_MAX 256
/* What a lease's times are clamped to: no renewal storm for 0 s, no timer overflow for ever. */
#define DHCP_LEASE_MIN_S 30u
#define DHCP_LEASE_MAX_S (366u * 24u * 3600u)
#define DHCP_RENEW_MIN_S 10u
/* Upstream's lease time when the ACK carries none. */
#define DHCP_LEASE_DEFAULT_S 3600u

/* An option the client sends: code and value, as the config's "provide" gives it. */
struct dhcp_opt {
	uint8_t code;
	uint8_t len;
	uint8_t value[255];
};

/* What one client message carries. Addresses are in network byte order. */
struct dhcp_build {
	uint8_t type;
	uint32_t xid;
	uint8_t chaddr[6];
	bool broadcast;
	uint32_t ciaddr;
	uint32_t requested_ip; /* option 50, 0 for none */
	uint32_t server_id;    /* option 54, 0 for none */
	const uint8_t *client_id; /* option 61's value */
	size_t client_id_len;
	const struct dhcp_opt *opts; /* the config's options; one of 61's code replaces it */
	size_t n_opts;
	const uint8_t *params; /* option 55, none when 0 */
	size_t n_params;
};

struct dhcp_route {
	uint32_t dst;     /* network order, host bits cleared */
	uint8_t len;
	uint32_t gw;      /* 0: on link */
};

/* What a server's reply says, read safely: whatever is absent or malformed is marked so. */
struct dhcp_reply {
	uint8_t type;
	uint32_t xid;
	uint8_t chaddr[6];
	uint32_t yiaddr;
	uint32_t server_id;    /* 0 when absent */
	bool has_mask;
	uint8_t prefix_len;
	bool bad_mask;         /* option 1 present but not a contiguous 4-byte mask */
	uint32_t router;       /* the first usable address of option 3, 0 when none */
	bool has_lease, has_t1, has_t2;
	uint32_t lease_s, t1_s, t2_s;
	bool bad_classless;    /* option 121 present but malformed or too long: ignored */
	size_t n_classless;
	struct dhcp_route classless[DHCP_ROUTES_MAX];
	size_t n_static;
	struct dhcp_route statics[DHCP_ROUTES_MAX];
};

/* A lease's times in seconds from the ACK, defaulted and clamped. */
struct dhcp_times {
	uint32_t lease_s;
	uint32_t t1_s;
	uint32_t t2_s;
};

/**
 * dhcp_msg_build() - a client message (BOOTREQUEST) with its options
 * @b: what it carries
 * @buf: output
 * @size: bytes in @buf
 * @ret_len: bytes written
 *
 * Return: 0, or -ENOSPC when the options do not fit.
 */
int dhcp_msg_build(const struct dhcp_build *b, uint8_t *buf, size_t size, size_t *ret_len);

/**
 * dhcp_msg_parse() - read a server's reply
 * @buf: the UDP payload
 * @len: its length
 * @ret: what it says, written also on failure (zeroed first)
 *
 * Option lengths are checked against the message; repeated options are concatenated
 * (RFC 3396); a malformed option 121 is marked and ignored, never half read.
 *
 * Return: 0, or -EBADMSG for a message that is no BOOTREPLY of Ethernet, lacks the
 * magic cookie or a message type, or has an option running past its end.
 */
int dhcp_msg_parse(const uint8_t *buf, size_t len, struct dhcp_reply *ret);

/**
 * dhcp_lease_times() - a lease's times, as upstream defaults them and clamped
 * @r: the ACK
 * @ret: lease, T1 (default half the lease) and T2 (default 85%), T1 <= T2 <= lease
 */
void dhcp_lease_times(const struct dhcp_reply *r, struct dhcp_times *ret);

/**
 * dhcp_classful_len() - the prefix length of a classful destination (option 33)
 * @dst: network order
 *
 * Return: 8, 16 or 24 for class A, B and C, 32 otherwise (as Go's DefaultMask).
 */
unsigned int dhcp_classful_len(uint32_t dst);
