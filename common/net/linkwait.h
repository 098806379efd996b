/* Waiting for a link of the caller's netns to come up: the kernel's notices, not a poll */
#pragma once

struct net_link;

/**
 * net_link_wait_up() - wait until a link's operational state is up
 * @ifindex: the link, in the caller's netns
 * @timeout_ms: the longest wait
 * @ret: the link as last seen (its state when the wait timed out), written unless
 *       the lookup failed
 *
 * Subscribes to the link notices first, then looks: a change between the two
 * cannot be missed, and no sleep stands between the change and the answer.
 *
 * Return: 0 when it is up, -ETIMEDOUT when it was not within @timeout_ms, -ENODEV
 * when the link went away, negative errno otherwise.
 */
int net_link_wait_up(int ifindex, int timeout_ms, struct net_link *ret);
