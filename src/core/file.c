// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/log.h"

int read_whole_file(const char *path, const char *what, size_t max,
		    uint8_t **data, size_t *size)
{
	struct stat st;
	size_t done = 0;
	uint8_t *buf;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hvm_set_errno_error("cannot open %s %s", what, path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return hvm_set_error(-EINVAL, "%s %s is not a regular file",
				     what, path);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return hvm_set_error(-EFBIG,
				     "%s %s is %lld bytes; at most %zu fit",
				     what, path, (long long)st.st_size, max);
	}
	if (st.st_size == 0) {
		close(fd);
		return hvm_set_error(-EINVAL, "%s %s is empty", what, path);
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return hvm_set_error(-ENOMEM, "out of memory reading %s %s",
				     what, path);
	}
	while (done < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			free(buf);
			close(fd);
			return hvm_set_error(-err, "cannot read %s %s: %s",
					     what, path, strerror(err));
		}
		done += (size_t)n;
	}
	close(fd);
	*data = buf;
	*size = done;
	return 0;
}
