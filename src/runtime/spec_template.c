// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * spec: write a starter config.json into a bundle, as `runc spec` does, so
 * that scripts written against runc (spec, edit with jq, run) work with
 * hintvm-runtime unchanged. The document is runc's example, field for
 * field (a terminal running "sh" in "rootfs", read-only, runc's default
 * capabilities, mounts, namespaces, masked and read-only paths), with the
 * hostname and ociVersion of this runtime; everything in it is either
 * honoured in the VM or harmlessly meaningless there (docs/oci-runtime.md).
 * Like runc it never overwrites a bundle's configuration.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

/* clang-format off */
const char rt_spec_template[] =
"{\n"
"\t\"ociVersion\": \"" RT_OCI_VERSION "\",\n"
"\t\"process\": {\n"
"\t\t\"terminal\": true,\n"
"\t\t\"user\": {\n"
"\t\t\t\"uid\": 0,\n"
"\t\t\t\"gid\": 0\n"
"\t\t},\n"
"\t\t\"args\": [\n"
"\t\t\t\"sh\"\n"
"\t\t],\n"
"\t\t\"env\": [\n"
"\t\t\t\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\n"
"\t\t\t\"TERM=xterm\"\n"
"\t\t],\n"
"\t\t\"cwd\": \"/\",\n"
"\t\t\"capabilities\": {\n"
"\t\t\t\"bounding\": [\n"
"\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
"\t\t\t\t\"CAP_KILL\",\n"
"\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
"\t\t\t],\n"
"\t\t\t\"effective\": [\n"
"\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
"\t\t\t\t\"CAP_KILL\",\n"
"\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
"\t\t\t],\n"
"\t\t\t\"permitted\": [\n"
"\t\t\t\t\"CAP_AUDIT_WRITE\",\n"
"\t\t\t\t\"CAP_KILL\",\n"
"\t\t\t\t\"CAP_NET_BIND_SERVICE\"\n"
"\t\t\t]\n"
"\t\t},\n"
"\t\t\"rlimits\": [\n"
"\t\t\t{\n"
"\t\t\t\t\"type\": \"RLIMIT_NOFILE\",\n"
"\t\t\t\t\"hard\": 1024,\n"
"\t\t\t\t\"soft\": 1024\n"
"\t\t\t}\n"
"\t\t],\n"
"\t\t\"noNewPrivileges\": true\n"
"\t},\n"
"\t\"root\": {\n"
"\t\t\"path\": \"rootfs\",\n"
"\t\t\"readonly\": true\n"
"\t},\n"
"\t\"hostname\": \"hintvm\",\n"
"\t\"mounts\": [\n"
"\t\t{\n"
"\t\t\t\"destination\": \"/proc\",\n"
"\t\t\t\"type\": \"proc\",\n"
"\t\t\t\"source\": \"proc\"\n"
"\t\t},\n"
"\t\t{\n"
"\t\t\t\"destination\": \"/dev\",\n"
"\t\t\t\"type\": \"tmpfs\",\n"
"\t\t\t\"source\": \"tmpfs\",\n"
"\t\t\t\"options\": [\n"
"\t\t\t\t\"nosuid\",\n"
"\t\t\t\t\"strictatime\",\n"
"\t\t\t\t\"mode=755\",\n"
"\t\t\t\t\"size=65536k\"\n"
"\t\t\t]\n"
"\t\t},\n"
"\t\t{\n"
"\t\t\t\"destination\": \"/dev/pts\",\n"
"\t\t\t\"type\": \"devpts\",\n"
"\t\t\t\"source\": \"devpts\",\n"
"\t\t\t\"options\": [\n"
"\t\t\t\t\"nosuid\",\n"
"\t\t\t\t\"noexec\",\n"
"\t\t\t\t\"newinstance\",\n"
"\t\t\t\t\"ptmxmode=0666\",\n"
"\t\t\t\t\"mode=0620\",\n"
"\t\t\t\t\"gid=5\"\n"
"\t\t\t]\n"
"\t\t},\n"
"\t\t{\n"
"\t\t\t\"destination\": \"/dev/shm\",\n"
"\t\t\t\"type\": \"tmpfs\",\n"
"\t\t\t\"source\": \"shm\",\n"
"\t\t\t\"options\": [\n"
"\t\t\t\t\"nosuid\",\n"
"\t\t\t\t\"noexec\",\n"
"\t\t\t\t\"nodev\",\n"
"\t\t\t\t\"mode=1777\",\n"
"\t\t\t\t\"size=65536k\"\n"
"\t\t\t]\n"
"\t\t},\n"
"\t\t{\n"
"\t\t\t\"destination\": \"/dev/mqueue\",\n"
"\t\t\t\"type\": \"mqueue\",\n"
"\t\t\t\"source\": \"mqueue\",\n"
"\t\t\t\"options\": [\n"
"\t\t\t\t\"nosuid\",\n"
"\t\t\t\t\"noexec\",\n"
"\t\t\t\t\"nodev\"\n"
"\t\t\t]\n"
"\t\t},\n"
"\t\t{\n"
"\t\t\t\"destination\": \"/sys\",\n"
"\t\t\t\"type\": \"sysfs\",\n"
"\t\t\t\"source\": \"sysfs\",\n"
"\t\t\t\"options\": [\n"
"\t\t\t\t\"nosuid\",\n"
"\t\t\t\t\"noexec\",\n"
"\t\t\t\t\"nodev\",\n"
"\t\t\t\t\"ro\"\n"
"\t\t\t]\n"
"\t\t},\n"
"\t\t{\n"
"\t\t\t\"destination\": \"/sys/fs/cgroup\",\n"
"\t\t\t\"type\": \"cgroup\",\n"
"\t\t\t\"source\": \"cgroup\",\n"
"\t\t\t\"options\": [\n"
"\t\t\t\t\"nosuid\",\n"
"\t\t\t\t\"noexec\",\n"
"\t\t\t\t\"nodev\",\n"
"\t\t\t\t\"relatime\",\n"
"\t\t\t\t\"ro\"\n"
"\t\t\t]\n"
"\t\t}\n"
"\t],\n"
"\t\"linux\": {\n"
"\t\t\"resources\": {\n"
"\t\t\t\"devices\": [\n"
"\t\t\t\t{\n"
"\t\t\t\t\t\"allow\": false,\n"
"\t\t\t\t\t\"access\": \"rwm\"\n"
"\t\t\t\t}\n"
"\t\t\t]\n"
"\t\t},\n"
"\t\t\"namespaces\": [\n"
"\t\t\t{\n"
"\t\t\t\t\"type\": \"pid\"\n"
"\t\t\t},\n"
"\t\t\t{\n"
"\t\t\t\t\"type\": \"network\"\n"
"\t\t\t},\n"
"\t\t\t{\n"
"\t\t\t\t\"type\": \"ipc\"\n"
"\t\t\t},\n"
"\t\t\t{\n"
"\t\t\t\t\"type\": \"uts\"\n"
"\t\t\t},\n"
"\t\t\t{\n"
"\t\t\t\t\"type\": \"mount\"\n"
"\t\t\t},\n"
"\t\t\t{\n"
"\t\t\t\t\"type\": \"cgroup\"\n"
"\t\t\t}\n"
"\t\t],\n"
"\t\t\"maskedPaths\": [\n"
"\t\t\t\"/proc/acpi\",\n"
"\t\t\t\"/proc/asound\",\n"
"\t\t\t\"/proc/kcore\",\n"
"\t\t\t\"/proc/keys\",\n"
"\t\t\t\"/proc/latency_stats\",\n"
"\t\t\t\"/proc/timer_list\",\n"
"\t\t\t\"/proc/timer_stats\",\n"
"\t\t\t\"/proc/sched_debug\",\n"
"\t\t\t\"/sys/firmware\",\n"
"\t\t\t\"/proc/scsi\",\n"
"\t\t\t\"/sys/devices/virtual/tpm\"\n"
"\t\t],\n"
"\t\t\"readonlyPaths\": [\n"
"\t\t\t\"/proc/bus\",\n"
"\t\t\t\"/proc/fs\",\n"
"\t\t\t\"/proc/irq\",\n"
"\t\t\t\"/proc/sys\",\n"
"\t\t\t\"/proc/sysrq-trigger\"\n"
"\t\t]\n"
"\t}\n"
"}\n";
/* clang-format on */

int cmd_spec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "rootless", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *bundle = ".";
	char path[PATH_MAX];
	size_t len = strlen(rt_spec_template);
	ssize_t n;
	int fd, opt, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+b:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			bundle = optarg;
			break;
		case 'r':
			rt_error(
				"spec: --rootless: hintvm-runtime runs rootful containers only");
			return 1;
		default:
			rt_error(
				"spec: unknown option (expected --bundle DIR)");
			return 1;
		}
	}
	if (optind != argc) {
		rt_error("spec: unexpected argument \"%s\" (expected none)",
			 argv[optind]);
		return 1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", bundle) >=
	    sizeof(path)) {
		rt_error("spec: bundle %s: path too long", bundle);
		return 1;
	}
	/* O_EXCL: an existing file, or a link planted there, stays as it is. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EEXIST) {
		rt_error("spec: %s exists: remove it first "
			 "(spec does not overwrite a bundle's configuration)",
			 path);
		return 1;
	}
	if (fd < 0) {
		rt_error("spec: cannot create %s: %s", path, strerror(errno));
		return 1;
	}
	n = write(fd, rt_spec_template, len);
	err = n < 0 ? errno : 0;
	if (close(fd) && !err)
		err = errno;
	if (n != (ssize_t)len || err) {
		rt_error("spec: cannot write %s: %s", path,
			 err ? strerror(err) : "short write");
		unlink(path);
		return 1;
	}
	return 0;
}
