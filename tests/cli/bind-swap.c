// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * LD_PRELOAD=bind-swap.so: after a successful bind() of a Unix socket at
 * $HVM_BIND_SWAP_PATH, put a symlink to $HVM_BIND_SWAP_VICTIM in its
 * place, as a local attacker racing the VMM would. control-test.sh checks
 * that hintvm notices and that the victim's mode is untouched (a
 * chmod(path) after bind would have made it 0600).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	static int (*real)(int, const struct sockaddr *, socklen_t);
	const char *path = getenv("HVM_BIND_SWAP_PATH");
	const char *victim = getenv("HVM_BIND_SWAP_VICTIM");
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
	int r;

	if (!real)
		real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(
			RTLD_NEXT, "bind");
	r = real(fd, addr, len);
	if (r == 0 && path && victim && addr->sa_family == AF_UNIX &&
	    !strcmp(un->sun_path, path) && unlink(path) == 0 &&
	    symlink(victim, path) < 0)
		abort();
	return r;
}
