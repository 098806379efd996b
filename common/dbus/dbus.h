/* D-Bus: method calls on the system bus, spoken over its socket (the wire protocol's subset a plugin needs) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cni_err;

/*
 * Upstream's firewall plugin talks to firewalld through godbus. A static plugin
 * cannot link libdbus without libsystemd's archive, which Debian does not ship
 * (libdbus-1.a calls sd_listen_fds() and sd_is_socket()), and a plugin needs a
 * handful of calls: connect to the system bus (DBUS_SYSTEM_BUS_ADDRESS, as godbus
 * and libdbus read it, else /var/run/dbus/system_bus_socket), authenticate as the
 * process's user (SASL EXTERNAL), say Hello, call methods whose arguments are
 * strings and read a reply of a string or a boolean, or an error's name and text.
 * That is what this module does, in the protocol's little-endian marshalling (a
 * reply in either byte order is read).
 */

/* How long a call may wait for its reply; a hung service is an error, not a hung plugin. */
#define DBUS_CALL_TIMEOUT_MS 20000
/* The largest message read: firewalld's replies are a few hundred bytes. */
#define DBUS_MESSAGE_MAX (1u << 20)

struct dbus_conn;

struct dbus_reply {
	bool is_error;          /* an ERROR message: error_name and text */
	char error_name[256];
	char signature[64];     /* of the body, "" for none */
	char text[1024];        /* a string reply, or the error's message (cut, escaped not) */
	bool boolean;           /* a boolean reply */
};

/**
 * dbus_connect_system() - connect to the system bus, authenticate and say Hello
 * @ret: the connection, written only on success; release with dbus_close()
 * @err: code 100 naming the address and what failed (no socket, refused, no answer)
 *
 * The address is DBUS_SYSTEM_BUS_ADDRESS when set, else the default; of a list
 * (";"-separated) the first that connects is used. Transports other than "unix"
 * (path= or abstract=) are refused.
 *
 * Return: 0 on success, negative errno on failure.
 */
int dbus_connect_system(struct dbus_conn **ret, struct cni_err *err);

/**
 * dbus_close() - close a connection
 * @c: connection, may be NULL
 */
void dbus_close(struct dbus_conn *c);

/**
 * dbus_call() - call a method whose arguments are all strings, and read its reply
 * @c: connection
 * @dest: the bus name called ("org.fedoraproject.FirewallD1")
 * @path: the object path
 * @iface: the interface
 * @member: the method
 * @args: the string arguments (valid UTF-8, no NUL), signature "s" each
 * @n_args: their number (at most 8)
 * @ret: the reply: a method return (string or boolean read, other bodies ignored)
 *       or an error, written on success
 * @err: code 100 when the call cannot be made or no reply comes in DBUS_CALL_TIMEOUT_MS
 *
 * An ERROR reply is a successful call: its name and message are in @ret.
 *
 * Return: 0 when a reply came, negative errno otherwise.
 */
int dbus_call(struct dbus_conn *c, const char *dest, const char *path, const char *iface,
	      const char *member, const char *const *args, size_t n_args, struct dbus_reply *ret,
	      struct cni_err *err);

/**
 * dbus_message_build() - marshal a method call (for dbus_call() and its tests)
 * @serial: the message's serial, not 0
 * @dest: as dbus_call()
 * @path: as dbus_call()
 * @iface: as dbus_call()
 * @member: as dbus_call()
 * @args: as dbus_call()
 * @n_args: as dbus_call()
 * @buf: output
 * @size: its size
 * @ret_len: the message's length
 *
 * Return: 0 on success, -EINVAL for an argument the protocol cannot carry, -E2BIG when
 * @buf is too small.
 */
int dbus_message_build(uint32_t serial, const char *dest, const char *path, const char *iface,
		       const char *member, const char *const *args, size_t n_args, uint8_t *buf,
		       size_t size, size_t *ret_len);

/**
 * dbus_message_parse() - read a message: its type, the serial it replies to, and its body
 * @buf: the whole message
 * @len: its length
 * @ret_type: 1 call, 2 return, 3 error, 4 signal
 * @ret_reply_serial: its REPLY_SERIAL, 0 when none
 * @ret: the reply as dbus_call() reads it
 *
 * Return: 0 on success, -EBADMSG for a malformed message.
 */
int dbus_message_parse(const uint8_t *buf, size_t len, int *ret_type, uint32_t *ret_reply_serial,
		       struct dbus_reply *ret);

/**
 * dbus_message_length() - a message's total length from its first 16 bytes
 * @head: the first 16 bytes
 * @ret: header, padding and body, written only on success
 *
 * Return: 0 on success, -EBADMSG for a header that is not a message's, -E2BIG past
 * DBUS_MESSAGE_MAX.
 */
int dbus_message_length(const uint8_t *head, size_t *ret);
