// SPDX-License-Identifier: LGPL-2.1-or-later
/* The container's veth, a tap and tc mirred between them (see network.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errbuf.h"
#include "network.h"

static int join_netns(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return rt_fail(err, errlen, -errno, "network namespace %s: %s",
			       path, strerror(errno));
	if (setns(fd, CLONE_NEWNET)) {
		close(fd);
		return rt_fail(err, errlen, -errno,
			       "cannot join the network namespace %s: %s", path,
			       strerror(errno));
	}
	close(fd);
	return 0;
}

static unsigned int prefix_len(const unsigned char *mask, size_t len)
{
	unsigned int n = 0;

	for (size_t i = 0; i < len; i++)
		n += (unsigned int)__builtin_popcount(mask[i]);
	return n;
}

/* An address the guest takes: IPv4, or IPv6 of global scope. */
static bool usable(const struct ifaddrs *ifa)
{
	const struct sockaddr *a = ifa->ifa_addr;
	const struct in6_addr *a6;

	if (!a || !ifa->ifa_netmask || (ifa->ifa_flags & IFF_LOOPBACK) ||
	    !strcmp(ifa->ifa_name, RT_TAP_NAME))
		return false;
	if (a->sa_family == AF_INET)
		return true;
	if (a->sa_family != AF_INET6)
		return false;
	a6 = &((const struct sockaddr_in6 *)a)->sin6_addr;
	return !IN6_IS_ADDR_LINKLOCAL(a6) && !IN6_IS_ADDR_LOOPBACK(a6) &&
	       !IN6_IS_ADDR_MULTICAST(a6);
}

/*
 * The first interface, loopback aside, with an IPv4 or a global IPv6
 * address (the veth the engine made), and its addresses: the first IPv4
 * one and up to RT_NET_MAX_V6 IPv6 ones.
 */
static int find_interface(struct rt_net *net)
{
	struct ifaddrs *list, *ifa;

	if (getifaddrs(&list))
		return -errno;
	for (ifa = list; ifa && !net->enabled; ifa = ifa->ifa_next) {
		if (usable(ifa) && strlen(ifa->ifa_name) < sizeof(net->veth)) {
			snprintf(net->veth, sizeof(net->veth), "%s",
				 ifa->ifa_name);
			net->enabled = true;
		}
	}
	for (ifa = list; ifa && net->enabled; ifa = ifa->ifa_next) {
		if (!usable(ifa) || strcmp(ifa->ifa_name, net->veth))
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET && !net->address[0]) {
			const struct sockaddr_in *a =
				(const struct sockaddr_in *)ifa->ifa_addr;
			const struct sockaddr_in *m =
				(const struct sockaddr_in *)ifa->ifa_netmask;

			inet_ntop(AF_INET, &a->sin_addr, net->address,
				  sizeof(net->address));
			net->prefix = prefix_len(
				(const unsigned char *)&m->sin_addr, 4);
		} else if (ifa->ifa_addr->sa_family == AF_INET6 &&
			   net->nr_v6 < RT_NET_MAX_V6) {
			const struct sockaddr_in6 *a =
				(const struct sockaddr_in6 *)ifa->ifa_addr;
			const struct sockaddr_in6 *m =
				(const struct sockaddr_in6 *)ifa->ifa_netmask;

			inet_ntop(AF_INET6, &a->sin6_addr,
				  net->address6[net->nr_v6], RT_NET_V6_LEN);
			net->prefix6[net->nr_v6++] = prefix_len(
				(const unsigned char *)&m->sin6_addr, 16);
		}
	}
	freeifaddrs(list);
	return 0;
}

/* MTU and MAC of the veth. */
static int read_link(struct rt_net *net)
{
	struct ifreq ifr = { 0 };
	unsigned char *mac;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (s < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", net->veth);
	if (ioctl(s, SIOCGIFMTU, &ifr) == 0)
		net->mtu = (unsigned int)ifr.ifr_mtu;
	else
		ret = -errno;
	if (!ret && ioctl(s, SIOCGIFHWADDR, &ifr) == 0) {
		mac = (unsigned char *)ifr.ifr_hwaddr.sa_data;
		snprintf(net->mac, sizeof(net->mac),
			 "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
			 mac[2], mac[3], mac[4], mac[5]);
	} else if (!ret) {
		ret = -errno;
	}
	close(s);
	return ret;
}

/* The default route's gateway on the veth (/proc/net/route is per netns). */
static void read_gateway(struct rt_net *net)
{
	char line[256], ifname[32];
	unsigned int dest, gw, flags;
	FILE *f = fopen("/proc/net/route", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %x %x %x", ifname, &dest, &gw, &flags) !=
		    4)
			continue;
		if (dest == 0 && gw && !strcmp(ifname, net->veth)) {
			struct in_addr a = { .s_addr = gw };

			inet_ntop(AF_INET, &a, net->gateway,
				  sizeof(net->gateway));
			break;
		}
	}
	fclose(f);
}

void rt_net_parse_ipv6_route(FILE *f, const char *veth, char *gw)
{
	char line[256], dest[33], hop[33], ifname[32];
	unsigned int dest_len;

	gw[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		struct in6_addr a;

		/* dest len src len next-hop metric refs use flags ifname */
		if (sscanf(line, "%32s %x %*s %*x %32s %*x %*x %*x %*x %31s",
			   dest, &dest_len, hop, ifname) != 4 ||
		    strcmp(dest, "00000000000000000000000000000000") ||
		    dest_len != 0 || strcmp(ifname, veth) || strlen(hop) != 32)
			continue;
		for (int i = 0; i < 16; i++) {
			unsigned int byte;

			if (sscanf(hop + 2 * i, "%2x", &byte) != 1)
				break;
			a.s6_addr[i] = (unsigned char)byte;
		}
		if (IN6_IS_ADDR_UNSPECIFIED(&a))
			continue;
		inet_ntop(AF_INET6, &a, gw, RT_NET_V6_LEN);
		return;
	}
}

/* The IPv6 default route's next hop on the veth. */
static void read_gateway6(struct rt_net *net)
{
	FILE *f = fopen("/proc/net/ipv6_route", "re");

	if (!f)
		return;
	rt_net_parse_ipv6_route(f, net->veth, net->gateway6);
	fclose(f);
}

static int make_tap(const struct rt_net *net)
{
	struct ifreq ifr = { 0 };
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC), s, ret = 0;

	if (fd < 0)
		return -errno;
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", RT_TAP_NAME);
	if (ioctl(fd, TUNSETIFF, &ifr) || ioctl(fd, TUNSETPERSIST, 1))
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	ifr = (struct ifreq){ 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", RT_TAP_NAME);
	ifr.ifr_mtu = (int)net->mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr))
		ret = -errno;
	if (!ret && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			ret = -errno;
	}
	close(s);
	return ret;
}

/* Run tc with ARGV (no shell); 0 when it succeeded. */
static int run_tc(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp("tc", argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -ECHILD;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -EIO;
}

/* Everything that arrives on FROM leaves through TO, and nothing else. */
static int redirect(const char *from, const char *to)
{
	char *qdisc[] = { "tc",		"qdisc",   "add", "dev",
			  (char *)from, "ingress", NULL };
	char *filter[] = { "tc",     "filter", "add",	   "dev", (char *)from,
			   "parent", "ffff:",  "protocol", "all", "u32",
			   "match",  "u8",     "0",	   "0",	  "action",
			   "mirred", "egress", "redirect", "dev", (char *)to,
			   NULL };
	int ret = run_tc(qdisc);

	return ret ? ret : run_tc(filter);
}

int rt_net_prepare(const char *netns, char *err, size_t errlen)
{
	struct rt_net defaults = { .mtu = 1500 };
	int ret;

	if (netns)
		ret = join_netns(netns, err, errlen);
	else
		ret = unshare(CLONE_NEWNET)
			      ? rt_fail(err, errlen, -errno,
					"cannot make a network namespace: %s",
					strerror(errno))
			      : 0;
	if (ret)
		return ret;
	ret = make_tap(&defaults);
	if (ret)
		return rt_fail(err, errlen, ret, "cannot create tap %s: %s",
			       RT_TAP_NAME, strerror(-ret));
	return 0;
}

static int set_tap_mtu(unsigned int mtu)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (s < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", RT_TAP_NAME);
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr))
		ret = -errno;
	close(s);
	return ret;
}

int rt_net_connect(struct rt_net *net, char *err, size_t errlen)
{
	int ret;

	memset(net, 0, sizeof(*net));
	ret = find_interface(net);
	if (ret)
		return rt_fail(err, errlen, ret, "cannot list interfaces: %s",
			       strerror(-ret));
	if (!net->enabled)
		return 0;
	ret = read_link(net);
	if (ret)
		return rt_fail(err, errlen, ret, "%s: %s", net->veth,
			       strerror(-ret));
	read_gateway(net);
	if (net->nr_v6)
		read_gateway6(net);
	ret = set_tap_mtu(net->mtu);
	if (!ret)
		ret = redirect(net->veth, RT_TAP_NAME);
	if (!ret)
		ret = redirect(RT_TAP_NAME, net->veth);
	if (ret)
		return rt_fail(
			err, errlen, ret,
			"tc mirred between %s and %s failed (is iproute2's tc installed?)",
			net->veth, RT_TAP_NAME);
	return 0;
}

int rt_net_guest_line(const struct rt_net *net, char *buf, size_t len)
{
	size_t used = 0;
	int n = snprintf(buf, len, "%s %u %s %u\n",
			 net->address[0] ? net->address : "-", net->prefix,
			 net->gateway[0] ? net->gateway : "-", net->mtu);

	for (unsigned int i = 0; n >= 0 && i <= net->nr_v6; i++) {
		if ((size_t)n >= len - used)
			return -ENOSPC;
		used += (size_t)n;
		if (i == net->nr_v6)
			break;
		n = snprintf(buf + used, len - used, "inet6 %s %u %s\n",
			     net->address6[i], net->prefix6[i],
			     net->gateway6[0] ? net->gateway6 : "-");
	}
	return n < 0 ? -ENOSPC : (int)used;
}

void rt_net_teardown(const char *netns)
{
	struct ifreq ifr = { 0 };
	int fd;

	if (netns && join_netns(netns, (char[64]){ 0 }, 64))
		return;
	if (!if_nametoindex(RT_TAP_NAME))
		return;
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", RT_TAP_NAME);
	if (!ioctl(fd, TUNSETIFF, &ifr))
		ioctl(fd, TUNSETPERSIST, 0);
	close(fd);
}
