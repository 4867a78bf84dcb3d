// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Interface configuration over rtnetlink, so the guest needs no iproute2:
 * link up and MTU (RTM_NEWLINK), an address (RTM_NEWADDR), a default route
 * (RTM_NEWROUTE). IPv4 and IPv6 alike. Each request asks for an ACK and
 * waits for it, so a failure is reported with the kernel's errno.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

struct nl_req {
	struct nlmsghdr nh;
	union {
		struct ifinfomsg ifi;
		struct ifaddrmsg ifa;
		struct rtmsg rt;
	};
	char attrs[256];
};

static void add_attr(struct nl_req *req, unsigned short type, const void *data,
		     size_t len)
{
	struct rtattr *rta;
	size_t off = NLMSG_ALIGN(req->nh.nlmsg_len);

	if (off + RTA_SPACE(len) > sizeof(*req))
		return; /* cannot happen: our attributes are few and small */
	rta = (struct rtattr *)((char *)req + off);
	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	req->nh.nlmsg_len = (unsigned int)(off + RTA_SPACE(len));
}

/* Send one request and wait for its ACK: 0 or the kernel's -errno. */
static int nl_talk(struct nl_req *req)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	char buf[1024];
	int fd, r = -EIO;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	req->nh.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	req->nh.nlmsg_seq = 1;
	if (sendto(fd, req, req->nh.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0) {
		r = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n >= (ssize_t)(NLMSG_HDRLEN + sizeof(struct nlmsgerr))) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (h->nlmsg_type == NLMSG_ERROR)
			r = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	}
out:
	close(fd);
	return r;
}

static int link_set(unsigned int index, unsigned int mtu)
{
	struct nl_req req = { 0 };

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	req.nh.nlmsg_type = RTM_NEWLINK;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = (int)index;
	req.ifi.ifi_flags = IFF_UP;
	req.ifi.ifi_change = IFF_UP;
	if (mtu)
		add_attr(&req, IFLA_MTU, &mtu, sizeof(mtu));
	return nl_talk(&req);
}

int agent_net_up(const char *ifname)
{
	unsigned int index = if_nametoindex(ifname);
	int r;

	if (!index)
		return -1;
	r = link_set(index, 0);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return 0;
}

/* Interfaces appear when their driver probes, after the module loads. */
static unsigned int wait_for_interface(const char *name)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	for (int i = 0; i < 500; i++) {
		unsigned int index = if_nametoindex(name);

		if (index)
			return index;
		nanosleep(&ts, NULL);
	}
	return 0;
}

int agent_net_configure(const char *spec)
{
	char buf[128], *save = NULL, *ifname, *addr, *slash, *opt;
	unsigned char ip[16], gw[16];
	unsigned int index, prefix, mtu = 0;
	int family, r, has_gw = 0;
	struct nl_req req = { 0 };

	if (strlen(spec) >= sizeof(buf))
		return -1;
	strcpy(buf, spec);
	ifname = strtok_r(buf, ",", &save);
	addr = strtok_r(NULL, ",", &save);
	if (!ifname || !addr || !(slash = strchr(addr, '/'))) {
		agent_log("hintvm.net=%s: want IF,ADDR/PREFIX[,gw=A][,mtu=N]",
			  spec);
		return -1;
	}
	*slash = '\0';
	family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	prefix = (unsigned int)strtoul(slash + 1, NULL, 10);
	if (inet_pton(family, addr, ip) != 1 ||
	    prefix > (family == AF_INET ? 32u : 128u)) {
		agent_log("hintvm.net=%s: bad address", spec);
		return -1;
	}
	while ((opt = strtok_r(NULL, ",", &save))) {
		if (!strncmp(opt, "gw=", 3) &&
		    inet_pton(family, opt + 3, gw) == 1)
			has_gw = 1;
		else if (!strncmp(opt, "mtu=", 4))
			mtu = (unsigned int)strtoul(opt + 4, NULL, 10);
		else
			agent_log("hintvm.net: ignoring %s", opt);
	}
	index = wait_for_interface(ifname);
	if (!index) {
		agent_log("hintvm.net: no interface %s", ifname);
		return -1;
	}
	r = link_set(index, mtu);
	if (r < 0) {
		agent_log("%s: link up/mtu %u: %s", ifname, mtu, strerror(-r));
		return -1;
	}
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg));
	req.nh.nlmsg_type = RTM_NEWADDR;
	req.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_REPLACE;
	req.ifa.ifa_family = (unsigned char)family;
	req.ifa.ifa_prefixlen = (unsigned char)prefix;
	/* A static address is ours: no second of duplicate detection. */
	if (family == AF_INET6)
		req.ifa.ifa_flags = IFA_F_NODAD;
	req.ifa.ifa_index = index;
	add_attr(&req, IFA_LOCAL, ip, family == AF_INET ? 4 : 16);
	add_attr(&req, IFA_ADDRESS, ip, family == AF_INET ? 4 : 16);
	r = nl_talk(&req);
	if (r < 0) {
		agent_log("%s: address %s/%u: %s", ifname, addr, prefix,
			  strerror(-r));
		return -1;
	}
	if (!has_gw)
		return 0;
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	req.nh.nlmsg_type = RTM_NEWROUTE;
	req.nh.nlmsg_flags = NLM_F_CREATE | NLM_F_REPLACE;
	req.rt.rtm_family = (unsigned char)family;
	req.rt.rtm_table = RT_TABLE_MAIN;
	req.rt.rtm_protocol = RTPROT_BOOT;
	req.rt.rtm_scope = RT_SCOPE_UNIVERSE;
	req.rt.rtm_type = RTN_UNICAST;
	add_attr(&req, RTA_GATEWAY, gw, family == AF_INET ? 4 : 16);
	add_attr(&req, RTA_OIF, &index, sizeof(index));
	r = nl_talk(&req);
	if (r < 0) {
		agent_log("%s: default route: %s", ifname, strerror(-r));
		return -1;
	}
	return 0;
}
