// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer harness for a snapshot's state file as a restore reads it:
 * the parser (src/snapshot/format.c), then every device section and the
 * split irqchip's I/O APIC section loaded into a device fresh from
 * creation, through the loader a restore calls (vmm/platform.c,
 * devices/virtio/virtio_vm.c): the UART, CMOS RTC, i8042, ACPI PM, PCI
 * host, and virtio-blk, -net, -console, -rng and -vsock on virtio-pci,
 * each with its queues and transport. The vCPU sections are KVM's to
 * check (KVM_SET_*), which a fuzzer without /dev/kvm cannot reach.
 *
 * A CRC-32 guards the body, so a fuzzer's mutations would almost all stop
 * at the checksum: the harness parses the input as it is, then again with
 * the header's length and CRC made right, which lets mutations reach the
 * section walk, its rules and the loaders. The config section goes
 * through snapshot_config_apply() (vmm/snapshot_config.c) onto a fresh
 * configuration, as a restore applies it.
 *
 * Invariants beyond "no sanitizer report":
 *  - a refused file leaves an error message that names the file;
 *  - an accepted file's sections lie inside the input, in order, and
 *    each per-vCPU one names a vCPU below nr_vcpus;
 *  - an applied config section gives the file's vCPU count and memory
 *    size; a refused one says so naming the file;
 *  - a refused device state leaves a message naming the device;
 *  - a device state one load accepts, saved again, is accepted by another
 *    fresh device, and that one saves the same bytes (a restored VM can
 *    be snapshotted and restored again);
 *  - a loaded virtio device survives the kick of every enabled queue that
 *    a restore sends, its rings wherever the state put them in RAM.
 */
#include <endian.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arch/x86/ioapic.h"
#include "arch/x86/platform.h"
#include "base/log.h"
#include "core/arch.h"
#include "core/config.h"
#include "core/console_out.h"
#include "core/event_loop.h"
#include "core/power.h"
#include "devices/acpi_pm.h"
#include "devices/cmos_rtc.h"
#include "devices/i8042.h"
#include "devices/pci/pci.h"
#include "devices/uart8250.h"
#include "devices/virtio/virtio_blk.h"
#include "devices/virtio/virtio_console.h"
#include "devices/virtio/virtio_net.h"
#include "devices/virtio/virtio_pci.h"
#include "devices/virtio/virtio_rng.h"
#include "devices/virtio/virtio_vsock.h"
#include "fuzz.h"
#include "snapshot/format.h"
#include "vmm/snapshot.h"

/* As large as the seeds' guests, so their rings load; pages on touch. */
#define RAM_SIZE (64ull << 20)
/* The seed's disk: 41 sectors (tests/fuzz/seeds/README.md). */
#define DISK_SIZE (41 * 512)

static uint8_t *ram;
static struct console_out *null_out;
static int disk_fd = -1;
static char disk_path[64], vsock_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_ERROR);
	ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	null_out = console_out_create(open("/dev/null", O_WRONLY | O_CLOEXEC));
	disk_fd = memfd_create("fuzz-disk", MFD_CLOEXEC);
	if (ram == MAP_FAILED || !null_out || disk_fd < 0 ||
	    ftruncate(disk_fd, DISK_SIZE) < 0)
		return -1;
	snprintf(disk_path, sizeof(disk_path), "/proc/self/fd/%d", disk_fd);
	snprintf(vsock_path, sizeof(vsock_path), "/tmp/hvm-fuzz-snap-%d.sock",
		 (int)getpid());
	return 0;
}

/* A refusal names what refused it (the loaders' messages start so). */
static void check_named(const char *name)
{
	check(!strncmp(hvm_error_message(), name, strlen(name)));
}

/* ---- platform devices and the I/O APIC ---- */

static int no_level(void *ctx, uint32_t gsi, bool level)
{
	return 0;
}

static void no_power(void *ctx, enum power_event ev, uint32_t code)
{
}

static int no_msi(void *ctx, uint64_t address, uint32_t data)
{
	return 0;
}

static int no_routes(void *ctx, const struct ioapic_route routes[IOAPIC_PINS])
{
	return 0;
}

static time_t fixed_time(void)
{
	return 1700000000;
}

/*
 * One platform device kind: create a fresh one, load, save, destroy.
 * STATE is a buffer of the kind's state size.
 */
struct platform_kind {
	const char *name;
	const char *label; /* how its loader's refusals start */
	uint32_t version;
	size_t size;
	void *(*create)(void);
	int (*load)(void *dev, const void *state);
	void (*save)(void *dev, void *state);
	void (*destroy)(void *dev);
};

static const struct power_sink power = { no_power, NULL };

static void *uart_new(void)
{
	return uart8250_create((struct irq_line){ no_level, NULL, 4 },
			       null_out);
}
static int uart_load(void *d, const void *s)
{
	return uart8250_load(d, s);
}
static void uart_save(void *d, void *s)
{
	uart8250_save(d, s);
}
static void uart_free(void *d)
{
	uart8250_destroy(d);
}

static void *rtc_new(void)
{
	return cmos_rtc_create(fixed_time);
}
static int rtc_load(void *d, const void *s)
{
	return cmos_rtc_load(d, s);
}
static void rtc_save(void *d, void *s)
{
	cmos_rtc_save(d, s);
}
static void rtc_free(void *d)
{
	cmos_rtc_destroy(d);
}

static void *kbc_new(void)
{
	return i8042_create(power);
}
static int kbc_load(void *d, const void *s)
{
	return i8042_load(d, s);
}
static void kbc_save(void *d, void *s)
{
	i8042_save(d, s);
}
static void kbc_free(void *d)
{
	i8042_destroy(d);
}

static void *pm_new(void)
{
	return acpi_pm_create(power, (struct irq_line){ 0 });
}
static int pm_load(void *d, const void *s)
{
	return acpi_pm_load(d, s);
}
static void pm_save(void *d, void *s)
{
	acpi_pm_save(d, s);
}
static void pm_free(void *d)
{
	acpi_pm_destroy(d);
}

static void *pci_new(void)
{
	return pci_host_create(X86_PCI_MMIO_GPA, X86_PCI_MMIO_SIZE);
}
static int pci_load(void *d, const void *s)
{
	return pci_host_load(d, s);
}
static void pci_save(void *d, void *s)
{
	pci_host_save(d, s);
}
static void pci_free(void *d)
{
	pci_host_destroy(d);
}

static const struct ioapic_ops ioapic_ops = { no_msi, no_routes, NULL };

static void *ioapic_new(void)
{
	return ioapic_create(&ioapic_ops);
}
static int ioapic_load_(void *d, const void *s)
{
	return ioapic_load(d, s);
}
static void ioapic_save_(void *d, void *s)
{
	ioapic_save(d, s);
}
static void ioapic_free(void *d)
{
	ioapic_destroy(d);
}

/* The names, versions and sizes vmm/platform.c writes. */
static const struct platform_kind platform_kinds[] = {
	{ "uart8250", "serial port", UART8250_STATE_VERSION,
	  sizeof(struct uart8250_state), uart_new, uart_load, uart_save,
	  uart_free },
	{ "cmos-rtc", "CMOS RTC", CMOS_RTC_STATE_VERSION,
	  sizeof(struct cmos_rtc_state), rtc_new, rtc_load, rtc_save,
	  rtc_free },
	{ "i8042", "i8042", I8042_STATE_VERSION, sizeof(struct i8042_state),
	  kbc_new, kbc_load, kbc_save, kbc_free },
	{ "acpi-pm", "ACPI PM", ACPI_PM_STATE_VERSION,
	  sizeof(struct acpi_pm_state), pm_new, pm_load, pm_save, pm_free },
	{ "pci-host", "PCI host", PCI_HOST_STATE_VERSION,
	  sizeof(struct pci_host_state), pci_new, pci_load, pci_save,
	  pci_free },
};
static const struct platform_kind ioapic_kind = {
	.name = "ioapic",
	.label = "I/O APIC",
	.version = IOAPIC_STATE_VERSION,
	.size = sizeof(struct ioapic_state),
	.create = ioapic_new,
	.load = ioapic_load_,
	.save = ioapic_save_,
	.destroy = ioapic_free,
};

/* Load DATA into a fresh device; when it takes it, the round trip. */
static void load_platform(const struct platform_kind *k, const uint8_t *data)
{
	uint8_t *state = malloc(k->size), *again = malloc(k->size),
		*third = malloc(k->size);
	void *dev = k->create(), *dev2 = NULL;

	check(state && again && third && dev);
	memcpy(state, data, k->size);
	if (k->load(dev, state) < 0) {
		check_named(k->label);
		goto out;
	}
	memset(again, 0, k->size);
	k->save(dev, again);
	dev2 = k->create();
	check(dev2);
	check(k->load(dev2, again) == 0);
	memset(third, 0, k->size);
	k->save(dev2, third);
	check(!memcmp(again, third, k->size));
out:
	k->destroy(dev);
	if (dev2)
		k->destroy(dev2);
	free(state);
	free(again);
	free(third);
}

/* ---- virtio devices on virtio-pci ---- */

enum virtio_kind { V_BLK, V_NET, V_CONSOLE, V_RNG, V_VSOCK };

struct virtio_fixture {
	struct event_loop *loop;
	struct pci_host *host;
	struct virtio_host vhost;
	struct virtio_device *vdev;
	struct virtio_pci vp;
	int peer; /* net: the "tap"'s other end */
};

static const uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

static struct virtio_device *create_kind(struct virtio_fixture *f,
					 enum virtio_kind kind)
{
	int fds[2];

	switch (kind) {
	case V_BLK:
		/* Unlocked: the round trip has two devices on it at once. */
		return virtio_blk_create(&f->vhost, disk_path, false, false,
					 false, 0);
	case V_NET:
		if (socketpair(AF_UNIX,
			       SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
			       fds) < 0)
			abort();
		f->peer = fds[1];
		return virtio_net_create_fd(&f->vhost, fds[0], mac, 0);
	case V_CONSOLE:
		return virtio_console_create(&f->vhost, null_out);
	case V_RNG:
		return virtio_rng_create(&f->vhost);
	case V_VSOCK:
		unlink(vsock_path);
		return virtio_vsock_create(&f->vhost, 3, vsock_path);
	}
	abort();
}

static void fixture_up(struct virtio_fixture *f, struct guest_memory *mem,
		       enum virtio_kind kind)
{
	memset(f, 0, sizeof(*f));
	f->peer = -1;
	if (event_loop_create(&f->loop, 64) < 0)
		abort();
	f->host = pci_host_create(X86_PCI_MMIO_GPA, X86_PCI_MMIO_SIZE);
	f->vhost = (struct virtio_host){ .mem = mem,
					 .loop = f->loop,
					 .msi = { no_msi, NULL } };
	f->vdev = create_kind(f, kind);
	if (!f->host || !f->vdev ||
	    virtio_device_attach_loop(f->vdev, f->loop) < 0 ||
	    virtio_pci_init(&f->vp, f->vdev, f->host, &f->vhost) < 0) {
		fprintf(stderr, "fixture: %s\n", hvm_error_message());
		abort();
	}
}

static void fixture_down(struct virtio_fixture *f)
{
	bool vsock = !strcmp(f->vdev->name, "virtio-vsock");

	/* Cancels and reaps what is in flight: RAM stays until after. */
	event_loop_destroy(f->loop);
	f->vdev->ops->destroy(f->vdev);
	pci_host_destroy(f->host);
	if (f->peer >= 0)
		close(f->peer);
	if (vsock)
		unlink(vsock_path);
}

static size_t extra_size(enum virtio_kind kind)
{
	switch (kind) {
	case V_BLK:
		return sizeof(struct virtio_blk_state);
	case V_NET:
		return sizeof(struct virtio_net_state);
	case V_VSOCK:
		return sizeof(struct virtio_vsock_state);
	case V_CONSOLE:
	case V_RNG:
		return 0;
	}
	abort();
}

static size_t virtio_size(const struct virtio_fixture *f, enum virtio_kind k)
{
	return virtio_device_state_size(f->vdev) +
	       sizeof(struct virtio_pci_state) + extra_size(k);
}

/* virtio_vm_load_device()'s steps, in its order, on F's fresh device. */
static int virtio_load(struct virtio_fixture *f, enum virtio_kind kind,
		       const uint8_t *data)
{
	size_t common = virtio_device_state_size(f->vdev);
	const uint8_t *extra = data + common + sizeof(struct virtio_pci_state);
	struct virtio_pci_state *ps = malloc(sizeof(*ps));
	int r;

	check(ps);
	memcpy(ps, data + common, sizeof(*ps));
	pthread_mutex_lock(&f->vdev->lock);
	r = virtio_device_load(f->vdev, data, common);
	if (r == 0)
		r = virtio_pci_load(&f->vp, ps);
	if (r == 0 && kind == V_BLK) {
		struct virtio_blk_state s;

		memcpy(&s, extra, sizeof(s));
		r = virtio_blk_load(f->vdev, &s);
	} else if (r == 0 && kind == V_NET) {
		struct virtio_net_state s;

		memcpy(&s, extra, sizeof(s));
		r = virtio_net_load(f->vdev, &s);
	} else if (r == 0 && kind == V_VSOCK) {
		struct virtio_vsock_state s;

		memcpy(&s, extra, sizeof(s));
		r = virtio_vsock_load(f->vdev, &s);
	}
	pthread_mutex_unlock(&f->vdev->lock);
	free(ps);
	return r;
}

static void virtio_save(struct virtio_fixture *f, enum virtio_kind kind,
			uint8_t *buf)
{
	size_t common = virtio_device_state_size(f->vdev);
	uint8_t *extra = buf + common + sizeof(struct virtio_pci_state);

	pthread_mutex_lock(&f->vdev->lock);
	virtio_device_save(f->vdev, buf);
	virtio_pci_save(&f->vp, (void *)(buf + common));
	if (kind == V_BLK)
		virtio_blk_save(f->vdev, (void *)extra);
	else if (kind == V_NET)
		virtio_net_save(f->vdev, (void *)extra);
	else if (kind == V_VSOCK)
		virtio_vsock_save(f->vdev, (void *)extra);
	pthread_mutex_unlock(&f->vdev->lock);
}

/* What virtio_vm_restored() sends, then the loop runs it (bounded). */
static void kick_restored(struct virtio_fixture *f)
{
	for (uint16_t q = 0; q < f->vdev->nr_vqs; q++)
		if (virtio_device_live(f->vdev) && f->vdev->vqs[q].enabled)
			virtio_device_kick(f->vdev, q);
	for (int i = 0; i < 16 && event_loop_run_ready(f->loop) > 0; i++)
		;
}

static void load_virtio(enum virtio_kind kind, const char *name,
			const uint8_t *data, size_t len)
{
	struct guest_memory mem = { 0 };
	struct virtio_fixture a, b;
	uint8_t *again = NULL, *third = NULL;
	size_t size;

	guest_memory_add_region(&mem, 0, RAM_SIZE, ram);
	fixture_up(&a, &mem, kind);
	size = virtio_size(&a, kind);
	/* The length platform.c checks before it loads anything. */
	if (len != size || strcmp(name, a.vdev->name))
		goto out;
	if (virtio_load(&a, kind, data) < 0) {
		check_named(a.vdev->name);
		goto out;
	}
	again = calloc(1, size);
	third = calloc(1, size);
	check(again && third);
	virtio_save(&a, kind, again);
	fixture_up(&b, &mem, kind);
	check(virtio_load(&b, kind, again) == 0);
	virtio_save(&b, kind, third);
	check(!memcmp(again, third, size));
	fixture_down(&b);
	kick_restored(&a);
out:
	fixture_down(&a);
	free(again);
	free(third);
}

/* A device section: its header, then the loader its name picks. */
static void load_device(const struct snap_section *s)
{
	static const struct {
		const char *prefix;
		enum virtio_kind kind;
	} virtio_kinds[] = {
		{ "virtio-blk", V_BLK },	 { "virtio-net", V_NET },
		{ "virtio-console", V_CONSOLE }, { "virtio-rng", V_RNG },
		{ "virtio-vsock", V_VSOCK },
	};
	struct snap_device_header h;
	char name[SNAP_DEVICE_NAME_LEN + 1] = { 0 };
	const uint8_t *data = s->data + sizeof(h);
	size_t len = s->len - sizeof(h);

	/* The format's rule for a device section. */
	check(s->len >= sizeof(h));
	memcpy(&h, s->data, sizeof(h));
	memcpy(name, h.name, sizeof(h.name));
	for (size_t i = 0;
	     i < sizeof(platform_kinds) / sizeof(platform_kinds[0]); i++) {
		const struct platform_kind *k = &platform_kinds[i];

		if (!strcmp(name, k->name) && h.version == k->version &&
		    len == k->size)
			load_platform(k, data);
	}
	if (h.version != VIRTIO_STATE_VERSION)
		return;
	for (size_t i = 0; i < sizeof(virtio_kinds) / sizeof(virtio_kinds[0]);
	     i++)
		if (!strncmp(name, virtio_kinds[i].prefix,
			     strlen(virtio_kinds[i].prefix)))
			load_virtio(virtio_kinds[i].kind, name, data, len);
}

/* ---- the file ---- */

/* The config parser asks the arch for its vCPU limit (x86.c needs KVM). */
unsigned int arch_max_vcpus(void)
{
	return X86_MAX_VCPUS;
}

static void apply_config(const struct snap_file *f)
{
	struct hvm_config *cfg = hvm_config_new();
	const struct snap_section *mem = snap_find(f, SNAP_SEC_MEMORY, 0);
	uint64_t mem_size;

	check(cfg && mem);
	memcpy(&mem_size, mem->data, sizeof(mem_size));
	hvm_clear_error();
	if (snapshot_config_apply(cfg, f, "fuzz") < 0)
		check(!strncmp(hvm_error_message(), "snapshot fuzz: ", 15) ||
		      !strcmp(hvm_error_message(), "out of memory"));
	else
		check(cfg->cpus == f->nr_vcpus && cfg->mem == mem_size);
	hvm_config_free(cfg);
}

/* LOAD: the devices too (once per input: on the copy made right). */
static void parse(const uint8_t *buf, size_t len, bool load)
{
	struct snap_file f;
	const uint8_t *prev = buf;

	if (snap_parse(buf, len, "fuzz", &f) < 0) {
		check(!strncmp(hvm_error_message(), "snapshot fuzz: ", 15));
		check(!f.sections);
		return;
	}
	check(f.nr_vcpus <= SNAP_MAX_VCPUS);
	for (size_t i = 0; i < f.nr_sections; i++) {
		const struct snap_section *s = &f.sections[i];

		check(s->data >= prev && s->data + s->len <= buf + len);
		check(snap_section_name(s->type));
		prev = s->data + s->len;
		if (s->type >= SNAP_SEC_VCPU_REGS && s->type < SNAP_SEC_DEVICE)
			check(s->instance < f.nr_vcpus);
	}
	if (load) {
		/* RAM as a restored guest's would be: untouched, all zero. */
		madvise(ram, RAM_SIZE, MADV_DONTNEED);
		apply_config(&f);
	}
	for (size_t i = 0; load && i < f.nr_sections; i++) {
		const struct snap_section *s = &f.sections[i];

		if (s->type == SNAP_SEC_DEVICE)
			load_device(s);
		else if (s->type == SNAP_SEC_IOAPIC &&
			 s->len == ioapic_kind.size)
			load_platform(&ioapic_kind, s->data);
	}
	snap_file_release(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint64_t len = htole64(size);
	uint32_t crc;

	parse(data, size, false);
	if (size < SNAP_HEADER_LEN)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memcpy(copy + 24, &len, sizeof(len));
	crc = htole32(
		snap_crc32(copy + SNAP_HEADER_LEN, size - SNAP_HEADER_LEN));
	memcpy(copy + 32, &crc, sizeof(crc));
	parse(copy, size, true);
	free(copy);
	return 0;
}
