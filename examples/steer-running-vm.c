// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Embedding libhintvm as an orchestrator: start a named VM, find it in the
 * host's registry, follow its events, read its effective configuration,
 * change a scheduling setting while it runs, pause, resume and stop it.
 *
 *   cc steer-running-vm.c $(pkg-config --cflags --libs hintvm) -o steer
 *   ./steer [NAME]
 */
#include <errno.h>
#include <hintvm/hintvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "steered";
	struct hvm_vm_entry *vms;
	struct hvm_config *cfg;
	struct hvm_exit exit;
	struct hvm_vm *vm;
	char info[8192], buf[4096];
	size_t nr_vms;
	ssize_t n;
	int events, r;

	cfg = hvm_config_new();
	if (!cfg || hvm_config_set(cfg, "name", name) < 0 ||
	    hvm_config_set(cfg, "mem", "64M") < 0 ||
	    hvm_config_set(cfg, "console", "none") < 0 ||
	    /* Spin at CPL3 until stopped. */
	    hvm_config_set(cfg, "cmdline",
			   "test=smp-count iterations=4294967296") < 0) {
		fprintf(stderr, "config: %s\n", hvm_last_error());
		return 2;
	}
	vm = hvm_vm_create(cfg);
	hvm_config_free(cfg);
	if (!vm || hvm_vm_start(vm) < 0) {
		fprintf(stderr, "start: %s\n", hvm_last_error());
		return 2;
	}
	/* Subscribed before anything happens: every event below arrives. */
	events = hvm_vm_event_fd(vm);
	if (events < 0) {
		fprintf(stderr, "events: %s\n", hvm_last_error());
		return 2;
	}
	if (hvm_list_vms(&vms, &nr_vms) == 0) {
		for (size_t i = 0; i < nr_vms; i++)
			if (!strcmp(vms[i].name, hvm_vm_name(vm)))
				printf("registered: %s at %s\n", vms[i].name,
				       vms[i].socket);
		free(vms);
	}
	if (hvm_vm_info(vm, info, sizeof(info)) > 0)
		printf("info: %s\n", info);

	if (hvm_vm_set(vm, "halt-poll", "20000") == 0)
		printf("set halt-poll 20000: ok\n");
	r = hvm_vm_set(vm, "cpus", "2");
	printf("set cpus 2: %s (%s)\n", r == -EPERM ? "refused" : "?",
	       hvm_last_error());
	hvm_vm_pause(vm);
	hvm_vm_resume(vm);
	hvm_vm_stop(vm);
	hvm_vm_wait(vm, &exit);

	/* The VM has ended: the stream holds its last events, then EOF. */
	while ((n = read(events, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		fputs(buf, stdout);
	}
	close(events);
	hvm_vm_destroy(vm);
	printf("ended: %s (status %d)\n", hvm_exit_reason_name(exit.reason),
	       hvm_exit_status(&exit));
	return 0;
}
