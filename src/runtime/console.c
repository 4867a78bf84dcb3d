// SPDX-License-Identifier: LGPL-2.1-or-later
/* Pseudo-terminals for --console-socket (see console.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "console.h"

int rt_send_fd(const char *path, int fd)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char data = 0;
	struct iovec iov = { .iov_base = &data, .iov_len = 1 };
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct cmsghdr *cmsg;
	int sock, ret = 0;

	if (strlen(path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (connect(sock, (struct sockaddr *)&addr, sizeof(addr))) {
		ret = -errno;
		goto out;
	}
	memset(&control, 0, sizeof(control));
	cmsg = CMSG_FIRSTHDR(&msg);
	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
		ret = -errno;
out:
	close(sock);
	return ret;
}

/*
 * Fully raw, output included: the guest's own tty does the line discipline
 * (echo, ICRNL, ONLCR), so the host's pty must pass bytes through both ways
 * as they are, or a container's lines would end in "\r\r\n" where runc's
 * end in "\r\n". Done before the master leaves, so that no byte the engine
 * writes is ever cooked or echoed by the host side; libhintvm leaves it so
 * (core/console.c keeps a terminal's output settings as it finds them).
 */
static int make_raw(int fd)
{
	struct termios t;

	if (tcgetattr(fd, &t))
		return -errno;
	cfmakeraw(&t);
	return tcsetattr(fd, TCSANOW, &t) ? -errno : 0;
}

int rt_console_open(struct rt_console *con, const char *socket,
		    const struct oci_process *proc, char *err, size_t errlen)
{
	int master, ret;
	char *name;

	con->slave = -1;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master) ||
	    !(name = ptsname(master))) {
		snprintf(err, errlen, "cannot open a pseudo-terminal: %s",
			 strerror(errno));
		if (master >= 0)
			close(master);
		return -EIO;
	}
	con->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (con->slave < 0) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		close(master);
		return -EIO;
	}
	ret = make_raw(con->slave);
	if (ret) {
		snprintf(err, errlen, "%s: cannot make it raw: %s", name,
			 strerror(-ret));
		close(master);
		rt_console_close(con);
		return -EIO;
	}
	if (proc->console_rows && proc->console_cols) {
		struct winsize ws = { .ws_row = proc->console_rows,
				      .ws_col = proc->console_cols };

		ioctl(master, TIOCSWINSZ, &ws);
	}
	ret = rt_send_fd(socket, master);
	close(master);
	if (ret) {
		snprintf(err, errlen, "cannot send the terminal to %s: %s",
			 socket, strerror(-ret));
		rt_console_close(con);
	}
	return ret;
}

void rt_console_close(struct rt_console *con)
{
	if (con->slave >= 0)
		close(con->slave);
	con->slave = -1;
}

void rt_console_make_controlling(int fd)
{
	ioctl(fd, TIOCSCTTY, 0);
}
