/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The container's network in its VM. The engine (CNI, netavark) puts a
 * veth with an address and a default route into the container's network
 * namespace: the one config.json names by path, or the one the container's
 * pid (the VMM process) lives in. The VMM process makes a tap there before
 * the VM exists; at start it connects the veth and the tap with tc mirred
 * redirections both ways (as Kata does), and the guest configures eth0
 * with the veth's addresses (its IPv4 one and its global IPv6 ones),
 * prefixes, default gateways and MTU (the "net" file of the hvmcfg
 * share). No interface at start: eth0 stays down, the `--network none`
 * case.
 */
#ifndef HVM_RUNTIME_NETWORK_H
#define HVM_RUNTIME_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define RT_TAP_NAME "hvmtap0"

/* IPv6 addresses carried over at most (global scope only). */
#define RT_NET_MAX_V6 4
#define RT_NET_V6_LEN 46 /* INET6_ADDRSTRLEN */

struct rt_net {
	bool enabled;
	char veth[16];
	char mac[18]; /* aa:bb:cc:dd:ee:ff */
	char address[16]; /* dotted IPv4, "" when none */
	unsigned int prefix;
	char gateway[16]; /* "" when none */
	char address6[RT_NET_MAX_V6][RT_NET_V6_LEN];
	unsigned int prefix6[RT_NET_MAX_V6];
	unsigned int nr_v6;
	char gateway6[RT_NET_V6_LEN]; /* "" when none */
	unsigned int mtu;
};

/*
 * In the VMM process, before the VM exists: join the namespace at NETNS,
 * or make a new one when NETNS is NULL (as runc does; engines such as ctr
 * --cni fill it after create), and create the tap there for the VM's NIC.
 */
int rt_net_prepare(const char *netns, char *err, size_t errlen);

/*
 * At start, in the VMM process: look for the engine's interface in the
 * namespace and, when there is one, connect it to the tap. NET->enabled
 * says whether the guest has an address to take.
 */
int rt_net_connect(struct rt_net *net, char *err, size_t errlen);

/*
 * The "net" file the guest init reads (see oci-init.c): a first line
 * "ADDRESS PREFIX GATEWAY MTU" (IPv4; "-" for an absent address or
 * gateway), then "inet6 ADDRESS PREFIX GATEWAY" per IPv6 address.
 * Its length, or -ENOSPC.
 */
int rt_net_guest_line(const struct rt_net *net, char *buf, size_t len);

/*
 * The IPv6 default route's next hop on VETH from F (/proc/net/ipv6_route's
 * format) into GW (RT_NET_V6_LEN bytes; "" when none).
 */
void rt_net_parse_ipv6_route(FILE *f, const char *veth, char *gw);

/* Remove the tap from the namespace at NETNS, if both still exist. */
void rt_net_teardown(const char *netns);

#endif
