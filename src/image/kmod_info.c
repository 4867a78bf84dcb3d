// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A kernel module's "depends=" from its ELF .modinfo section, read with
 * pread and bounded at every step (the file is the user's, not the
 * guest's, but a truncated or foreign file must only be refused).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image/kmod_info.h"

#define MAX_SECTION (4u << 20)

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, (off_t)off);

	return n == (ssize_t)len ? 0 : -ENOEXEC;
}

static int read_section(int fd, const Elf64_Shdr *sh, char **data)
{
	if (sh->sh_size == 0 || sh->sh_size > MAX_SECTION ||
	    sh->sh_type == SHT_NOBITS)
		return -ENOEXEC;
	*data = malloc(sh->sh_size + 1);
	if (!*data)
		return -ENOMEM;
	if (read_at(fd, *data, sh->sh_size, sh->sh_offset) < 0) {
		free(*data);
		*data = NULL;
		return -ENOEXEC;
	}
	(*data)[sh->sh_size] = '\0';
	return 0;
}

int kmod_read_depends(const char *path, char *buf, size_t size)
{
	char *names = NULL, *info = NULL;
	Elf64_Shdr *shdrs = NULL;
	Elf64_Ehdr eh;
	int fd, r = -ENOEXEC;

	if (!size)
		return -E2BIG;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (read_at(fd, &eh, sizeof(eh), 0) < 0 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    eh.e_shstrndx >= eh.e_shnum)
		goto out;
	shdrs = calloc(eh.e_shnum, sizeof(*shdrs));
	if (!shdrs) {
		r = -ENOMEM;
		goto out;
	}
	if (read_at(fd, shdrs, eh.e_shnum * sizeof(*shdrs), eh.e_shoff) < 0 ||
	    read_section(fd, &shdrs[eh.e_shstrndx], &names) < 0)
		goto out;
	for (unsigned int i = 0; i < eh.e_shnum; i++) {
		if (shdrs[i].sh_name >= shdrs[eh.e_shstrndx].sh_size ||
		    strcmp(names + shdrs[i].sh_name, ".modinfo"))
			continue;
		if (read_section(fd, &shdrs[i], &info) < 0)
			goto out;
		/* NUL-separated "key=value" strings. */
		r = 0;
		for (size_t off = 0; off < shdrs[i].sh_size;) {
			const char *s = info + off;
			size_t len = strlen(s);

			if (!strncmp(s, "depends=", 8)) {
				if (len - 8 >= size) {
					r = -E2BIG;
					break;
				}
				memcpy(buf, s + 8, len - 8 + 1);
				break;
			}
			off += len + 1;
		}
		break;
	}
out:
	free(info);
	free(names);
	free(shdrs);
	close(fd);
	return r;
}
