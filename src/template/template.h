/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * VM templates (docs/template.md): a snapshot of a VM booted until its
 * guest agent answers, kept in a store directory under the SHA-256 of
 * what the guest's memory depends on (the key), and restored as clones.
 *
 * key.c    what goes into the key, and the key itself;
 * store.c  the store: its directory, ownership, listing, stale removal;
 * make.c   making one (boot, wait for the agent, snapshot) and
 *          restoring a clone from one.
 */
#ifndef HVM_TEMPLATE_TEMPLATE_H
#define HVM_TEMPLATE_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

/*
 * The key text's own layout: a new line or order is a new version, and a
 * template of another is stale (2: the shares line).
 */
#define TEMPLATE_KEY_VERSION 2
#define TEMPLATE_KEY_HEX 64
#define TEMPLATE_TEXT_MAX 8192
/* The files of one template: the snapshot's two and the key's two. */
#define TEMPLATE_KEY_FILE "key"
#define TEMPLATE_ORIGIN_FILE "origin"
/* How long `make` waits for the agent by default. */
#define TEMPLATE_READY_TIMEOUT_MS 60000

/* This host and this hintvm, as far as a template depends on them. */
struct template_host {
	char cpu[256]; /* arch_host_cpu_id() */
	unsigned int snapshot_format; /* SNAP_VERSION */
	unsigned int virtio_state; /* VIRTIO_STATE_VERSION */
};

/*
 * TEXT is the key's parts as "name=value\n" lines in a fixed order, and
 * HEX its SHA-256: the key. ORIGIN says where the hashed files came from
 * (paths, when the template was made); it is not hashed, so the same
 * kernel under another path finds the same template, and is what a
 * listing checks for staleness.
 */
struct template_key {
	char text[TEMPLATE_TEXT_MAX];
	size_t len;
	char origin[TEMPLATE_TEXT_MAX];
	size_t origin_len;
	char hex[TEMPLATE_KEY_HEX + 1];
};

/* key.c */
int template_host_this(struct template_host *host);
/*
 * What a template cannot hold: -EINVAL naming the option (disks, NICs,
 * shares, a main process, --restore, hugepages, the rr partner), or one
 * without a vsock device (nothing could tell that the agent is ready).
 */
int template_check_config(const struct hvm_config *cfg);
/* CFG's key on HOST: reads and hashes the kernel, initrd and agent. */
int template_key_gather(const struct hvm_config *cfg,
			const struct template_host *host,
			struct template_key *key);
/* The SHA-256 of the file at PATH in hex; WHAT names it in errors. */
int template_file_sha256(const char *path, const char *what, char hex[65]);
/* The value of line NAME= in TEXT (LEN bytes) into BUF, or -ENOENT. */
int template_text_get(const char *text, size_t len, const char *name, char *buf,
		      size_t size);
/* KEY is 64 lower-case hex digits. */
bool template_key_valid(const char *key);

/* store.c */
/* $HINTVM_TEMPLATE_DIR, else /var/cache/hintvm/templates for root, else
 * ~/.cache/hintvm/templates. */
int template_dir_default(char *buf, size_t len);
/* *DIR, or when NULL the default (in BUF, then *DIR = BUF): 0 or -errno. */
int template_dir_or_default(const char **dir, char *buf, size_t len);
/*
 * Open the store DIR (made, mode 0700, when CREATE and missing): a
 * directory owned by root or the caller that nobody else may write, else
 * -EPERM naming owner and mode. An fd or a negative errno.
 */
int template_dir_open(const char *dir, bool create);
/*
 * Template NAME of the store at DIRFD (DIR in messages): checked as the
 * store is (owner, mode), each file too; its key text must hash to NAME.
 * DISK: bytes it takes on disk; MEM: its guest RAM.
 */
int template_load(int dirfd, const char *dir, const char *name,
		  struct template_key *key, uint64_t *disk, uint64_t *mem);
/*
 * Why KEY can no longer match on HOST (another CPU or snapshot format)
 * or, with FILES, anywhere (the built-in kernel or agent of another
 * build; a file it was made from changed or gone): 1 with WHY filled, or
 * 0 when it still can. A restore checks the host alone: the snapshot
 * needs none of the files it was made from.
 */
int template_stale(const struct template_key *key,
		   const struct template_host *host, bool files, char *why,
		   size_t len);
/* Remove template NAME (its known files, then the directory). */
int template_remove(int dirfd, const char *dir, const char *name);

#endif
