#!/usr/bin/python3
"""A CRI v1 client for the oci tier's L1 (tests/oci/l1-tests.sh): one
long-lived process runs every selected case against containerd's CRI plugin
(Python and gRPC start slowly under TCG), as the kubelet would drive it.

    cri-test.py --socket PATH --image REF --pause REF [--handler NAME]
                --logs DIR CASE...

Each case prints one line, `CRI-RESULT <case> pass|fail <detail>`, which
l1-tests.sh turns into E2E-RESULT; `CRI-LOG <case> <text>` lines come
before a failure's verdict. The messages are cri_v1_pb2, generated at the
tier's run from tests/oci/cri/cri_v1.proto (the subset of the CRI it uses).

Needs Debian's python3-grpcio and python3-protobuf (/usr/bin/python3: the
PATH python3 may be another interpreter that cannot see them).
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

import grpc

import cri_v1_pb2 as cri

RUNTIME = "runtime.v1.RuntimeService"
IMAGES = "runtime.v1.ImageService"
# Long enough for a VM to boot under TCG in the L1.
CALL_TIMEOUT_S = 240


class CriError(Exception):
    pass


class Cri:
    """One channel to containerd's CRI; a method per CRI call used."""

    def __init__(self, socket):
        self.channel = grpc.insecure_channel("unix://" + socket)
        self.calls = {}

    def call(self, service, method, request, reply_type):
        key = (service, method)
        if key not in self.calls:
            self.calls[key] = self.channel.unary_unary(
                "/%s/%s" % (service, method),
                request_serializer=lambda m: m.SerializeToString(),
                response_deserializer=reply_type.FromString)
        try:
            return self.calls[key](request, timeout=CALL_TIMEOUT_S)
        except grpc.RpcError as e:
            raise CriError("%s: %s: %s" % (method, e.code().name,
                                            e.details())) from None

    def runtime(self, method, request):
        reply = getattr(cri, method + "Response")
        return self.call(RUNTIME, method, request, reply)

    def image(self, method, request):
        reply = getattr(cri, method + "Response")
        return self.call(IMAGES, method, request, reply)


def log(case, text):
    for line in str(text).splitlines() or [""]:
        print("CRI-LOG %s %s" % (case, line), flush=True)


def verdict(case, ok, detail):
    print("CRI-RESULT %s %s %s" % (case, "pass" if ok else "fail",
                                   " ".join(str(detail).split())),
          flush=True)


def sandbox_config(args, name):
    cfg = cri.PodSandboxConfig()
    cfg.metadata.name = name
    cfg.metadata.uid = "uid-" + name
    cfg.metadata.namespace = "hintvm-test"
    # no hostname: the pod shares the node's UTS namespace with its network
    cfg.log_directory = os.path.join(args.logs, name)
    # The node's network: the L1 has no CNI configuration for the CRI,
    # and the cases are about the pod, not its network.
    ns = cfg.linux.security_context.namespace_options
    ns.network = cri.NODE
    ns.pid = cri.CONTAINER
    ns.ipc = cri.POD
    return cfg


def container_config(args, name, command, memory_limit=0):
    cfg = cri.ContainerConfig()
    cfg.metadata.name = name
    cfg.image.image = args.image
    cfg.command.extend(command)
    cfg.log_path = name + ".log"
    # As the kubelet for a pod without shareProcessNamespace: a PID
    # namespace of the container's own (the enum's default is POD).
    cfg.linux.security_context.namespace_options.pid = cri.CONTAINER
    if memory_limit:
        cfg.linux.resources.memory_limit_in_bytes = memory_limit
    return cfg


def wait_exited(client, cid, timeout_s):
    """ContainerStatus until EXITED; the last status."""
    deadline = time.monotonic() + timeout_s
    while True:
        st = client.runtime("ContainerStatus",
                            cri.ContainerStatusRequest(container_id=cid))
        if st.status.state == cri.CONTAINER_EXITED:
            return st.status
        if time.monotonic() > deadline:
            raise CriError("container %s not EXITED after %d s (state %s)" %
                           (cid, timeout_s,
                            cri.ContainerState.Name(st.status.state)))
        time.sleep(0.5)


def cri_log_lines(path):
    """The CRI log format: `<RFC3339Nano> <stream> <P|F> <text>` a line;
    [(stream, tag, text)]. A line of another shape raises."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 3)
            if len(parts) < 3 or parts[1] not in ("stdout", "stderr") \
                    or parts[2] not in ("P", "F") or "T" not in parts[0]:
                raise CriError("%s: not a CRI log line: %r" % (path, line))
            out.append((parts[1], parts[2], parts[3] if len(parts) > 3
                        else ""))
    return out


def vmm_count():
    """hintvm VMM processes (hintvm-runtime names its VMM hintvm-vmm)."""
    r = subprocess.run(["pgrep", "-x", "hintvm-vmm"], capture_output=True,
                       text=True, check=False)
    return len(r.stdout.split())


class Pod:
    """A pod sandbox and its containers, removed whatever happens."""

    def __init__(self, client, args, name, handler=None):
        self.client, self.args, self.name = client, args, name
        self.handler = handler or args.handler
        self.config = sandbox_config(args, name)
        self.id = None
        self.containers = []

    def __enter__(self):
        req = cri.RunPodSandboxRequest(config=self.config,
                                       runtime_handler=self.handler)
        self.id = self.client.runtime("RunPodSandbox", req).pod_sandbox_id
        return self

    def container(self, name, command, memory_limit=0):
        req = cri.CreateContainerRequest(
            pod_sandbox_id=self.id,
            config=container_config(self.args, name, command, memory_limit),
            sandbox_config=self.config)
        cid = self.client.runtime("CreateContainer", req).container_id
        self.containers.append(cid)
        self.client.runtime("StartContainer",
                            cri.StartContainerRequest(container_id=cid))
        return cid

    def log_path(self, name):
        return os.path.join(self.config.log_directory, name + ".log")

    def __exit__(self, *exc):
        problems = []
        for cid in self.containers:
            for method, req in (
                    ("StopContainer", cri.StopContainerRequest(
                        container_id=cid, timeout=2)),
                    ("RemoveContainer", cri.RemoveContainerRequest(
                        container_id=cid))):
                try:
                    self.client.runtime(method, req)
                except CriError as e:
                    problems.append(str(e))
        if self.id:
            for method in ("StopPodSandbox", "RemovePodSandbox"):
                try:
                    req = getattr(cri, method + "Request")(
                        pod_sandbox_id=self.id)
                    self.client.runtime(method, req)
                except CriError as e:
                    problems.append(str(e))
        self.cleanup_problems = problems
        return False


def case_version(client, args, case):
    v = client.runtime("Version", cri.VersionRequest(version="v1"))
    img = client.image("ImageStatus", cri.ImageStatusRequest(
        image=cri.ImageSpec(image=args.pause)))
    ok = v.runtime_name == "containerd" and v.runtime_api_version == "v1" \
        and img.image.id != ""
    verdict(case, ok, "CRI v1 answers: %s %s, API %s; pause image %s %s" %
            (v.runtime_name, v.runtime_version, v.runtime_api_version,
             args.pause, "present" if img.image.id else "MISSING"))


def case_pod_run(client, args, case):
    """A pod with one container that prints and exits: state, exit code
    and the CRI-format log containerd writes from the shim's stdio."""
    t0 = time.monotonic()
    with Pod(client, args, case) as pod:
        st = client.runtime("PodSandboxStatus", cri.PodSandboxStatusRequest(
            pod_sandbox_id=pod.id))
        if st.status.state != cri.SANDBOX_READY:
            raise CriError("pod %s is %s after RunPodSandbox, expected "
                           "SANDBOX_READY" % (pod.id, cri.PodSandboxState.Name(
                               st.status.state)))
        cid = pod.container("hello", ["sh", "-c",
                                      "echo hello-from-pod; echo to-stderr >&2;"
                                      " exit 3"])
        status = wait_exited(client, cid, 240)
        lines = cri_log_lines(pod.log_path("hello"))
        elapsed = time.monotonic() - t0
    problems = []
    if status.exit_code != 3:
        problems.append("exit code %d, expected 3" % status.exit_code)
    if ("stdout", "F", "hello-from-pod") not in lines:
        problems.append("log lacks stdout F hello-from-pod: %r" % lines)
    if ("stderr", "F", "to-stderr") not in lines:
        problems.append("log lacks stderr F to-stderr: %r" % lines)
    problems += pod.cleanup_problems
    if problems:
        verdict(case, False, "; ".join(problems))
    else:
        verdict(case, True, "RunPodSandbox (handler %s), a container printed"
                " and exited: EXITED with 3, stdout and stderr in the CRI log"
                " (%.1f s)" % (args.handler or "default", elapsed))


def ctr_metrics(cid):
    """`ctr task metrics` of task CID as {metric: value}; {} when none."""
    r = subprocess.run(["ctr", "-n", "k8s.io", "task", "metrics", cid],
                       capture_output=True, text=True, timeout=60,
                       check=False)
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def case_pod_one_vm(client, args, case):
    """While a pod's two containers run, the pod is one VM: one VMM
    process more than before the pod, none more after its removal. The
    sandbox's metrics are that VMM process's cost on the host (resident
    memory with the guest RAM it touched, its threads), which the
    containers' own guest-cgroup numbers leave out."""
    before = vmm_count()
    with Pod(client, args, case) as pod:
        for name in ("one", "two"):
            pod.container(name, ["sleep", "600"])
        running = vmm_count()
        states = [client.runtime("ContainerStatus", cri.ContainerStatusRequest(
            container_id=cid)).status.state for cid in pod.containers]
        sandbox = ctr_metrics(pod.id)
    after = vmm_count()
    problems = []
    vmm_mem = sandbox.get("memory.usage_in_bytes", 0)
    vmm_threads = sandbox.get("pids.current", 0)
    log(case, "sandbox metrics (the VMM process): %r" % sandbox)
    if vmm_mem < 8 << 20 or vmm_threads < 2:
        problems.append("the sandbox's metrics are not a running VMM's: "
                        "%d bytes resident, %d threads" %
                        (vmm_mem, vmm_threads))
    if any(st != cri.CONTAINER_RUNNING for st in states):
        problems.append("container states %s, expected RUNNING" %
                        [cri.ContainerState.Name(st) for st in states])
    if running - before != 1:
        problems.append("%d VMM processes while the pod ran (%d before), "
                        "expected one more" % (running, before))
    if after != before:
        problems.append("%d VMM processes after removal, %d before" %
                        (after, before))
    problems += pod.cleanup_problems
    verdict(case, not problems, "; ".join(problems) or
            "a sandbox and two running containers: one VMM process, gone"
            " after StopPodSandbox/RemovePodSandbox; the sandbox's metrics"
            " are the VMM's: %d MiB resident, %d threads" %
            (vmm_mem >> 20, vmm_threads))


def case_pod_localhost(client, args, case):
    """Two containers of a pod talk over localhost: one serves a page
    with busybox httpd, the other fetches it with wget."""
    serve = ("mkdir -p /tmp/www && echo pong-from-server > /tmp/www/index.html"
             " && exec httpd -f -p 127.0.0.1:7777 -h /tmp/www")
    fetch = ("i=0; while [ $i -lt 120 ]; do"
             " wget -q -O- http://127.0.0.1:7777/ && exit 0;"
             " i=$((i+1)); sleep 1; done; exit 1")
    with Pod(client, args, case) as pod:
        pod.container("server", ["sh", "-c", serve])
        cid = pod.container("client", ["sh", "-c", fetch])
        status = wait_exited(client, cid, 240)
        lines = cri_log_lines(pod.log_path("client"))
    problems = []
    if status.exit_code != 0:
        problems.append("client exit code %d, expected 0" % status.exit_code)
    if ("stdout", "F", "pong-from-server") not in lines:
        problems.append("client log lacks the server's page: %r" % lines)
    problems += pod.cleanup_problems
    verdict(case, not problems, "; ".join(problems) or
            "container client fetched container server's page from"
            " 127.0.0.1:7777")


def case_pod_exec_sync(client, args, case):
    """ExecSync into an app container of a pod: its output, its exit
    status, and that it runs in the container's own root (a file the
    container wrote there; not the VM's root, which has the pod share)
    and PID namespace (its PID 1 is the container's sleep; the other
    container's sleep is not to be seen)."""
    setup = ("echo marker-$$ > /exec-marker && echo written && exec sleep 600")
    probe = ("i=0; while [ ! -s /exec-marker ] && [ $i -lt 100 ]; do"
             " sleep 0.2; i=$((i+1)); done; cat /exec-marker;"
             " if [ -e /hintvm-pod ]; then echo in-vm-root; fi;"
             " echo pid1=$(cat /proc/1/cmdline | tr '\\0' ' ');"
             " for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"
             " | grep -c 'sleep 60[01]' | sed 's/^/sleeps=/';"
             " echo to-stderr >&2; exit 7")
    with Pod(client, args, case) as pod:
        pod.container("other", ["sleep", "601"])
        cid = pod.container("target", ["sh", "-c", setup])
        res = client.runtime("ExecSync", cri.ExecSyncRequest(
            container_id=cid, cmd=["sh", "-c", probe], timeout=120))
        # A second exec: exec ids are per exec, and the first one's end
        # left the container running.
        res2 = client.runtime("ExecSync", cri.ExecSyncRequest(
            container_id=cid, cmd=["cat", "/exec-marker"], timeout=120))
        state = client.runtime("ContainerStatus", cri.ContainerStatusRequest(
            container_id=cid)).status.state
        stats = client.runtime("ContainerStats", cri.ContainerStatsRequest(
            container_id=cid)).stats
    out = res.stdout.decode(errors="replace")
    problems = []
    # Its own cgroup in the guest: a shell, a sleep and the execs' work.
    mem = stats.memory.working_set_bytes.value
    cpu = stats.cpu.usage_core_nano_seconds.value
    if not 0 < mem < (1 << 30) or not cpu > 0:
        problems.append("ContainerStats: working set %d bytes, cpu %d ns;"
                        " expected some of both" % (mem, cpu))
    if res.exit_code != 7:
        problems.append("exit code %d, expected 7" % res.exit_code)
    if not out.startswith("marker-"):
        problems.append("stdout %r lacks the container's /exec-marker" % out)
    # The marker says marker-1: the container's sh was PID 1 of its own.
    if not out.startswith("marker-1\n"):
        problems.append("the container's process was not PID 1 of its own"
                        " namespace: %r" % out)
    if "pid1=sleep 600" not in out:
        problems.append("the exec's PID 1 is not the container's sleep: %r"
                        % out)
    if "sleeps=1\n" not in out:
        problems.append("the exec sees other containers' processes (only"
                        " its container's sleep 600 expected): %r" % out)
    if "in-vm-root" in out:
        problems.append("the exec saw /hintvm-pod: it ran in the VM's root,"
                        " not the container's")
    if res.stderr.decode(errors="replace").strip() != "to-stderr":
        problems.append("stderr %r, expected to-stderr" % res.stderr)
    if res2.exit_code != 0 or res2.stdout.decode(errors="replace") != out.split(
            "\n")[0] + "\n":
        problems.append("second ExecSync: status %d, stdout %r" %
                        (res2.exit_code, res2.stdout))
    if state != cri.CONTAINER_RUNNING:
        problems.append("container %s after the execs, expected RUNNING" %
                        cri.ContainerState.Name(state))
    problems += pod.cleanup_problems
    verdict(case, not problems, "; ".join(problems) or
            "ExecSync in app container: exit 7, stdout %s from the container's"
            " own root, stderr apart; a second ExecSync; container still"
            " RUNNING; its own PID namespace (PID 1 its sleep, the other"
            " container's unseen); ContainerStats from its guest cgroup:"
            " %d bytes, %d ns" % (out.split("\n")[0], mem, cpu))


def wait_reason(client, cid, timeout_s):
    """ContainerStatus until its reason is set (containerd's CRI handles
    TaskOOM apart from the exit); the last status."""
    deadline = time.monotonic() + timeout_s
    while True:
        st = client.runtime("ContainerStatus", cri.ContainerStatusRequest(
            container_id=cid)).status
        if st.reason == "OOMKilled" or time.monotonic() > deadline:
            return st
        time.sleep(0.5)


def case_pod_oom(client, args, case):
    """A container with a 32 MiB memory limit allocates 64 MiB: the
    guest's OOM killer ends it in its own cgroup, the shim reports
    TaskOOM, and the CRI says OOMKilled (exit 137). A container beside it
    without a limit allocates 1 MiB and completes: not OOMKilled."""
    hog = ["sh", "-c", "echo hog-start; exec dd if=/dev/zero of=/dev/null"
           " bs=64M count=1"]
    calm = ["sh", "-c", "dd if=/dev/zero of=/dev/null bs=1M count=1 &&"
            " echo calm-done"]
    with Pod(client, args, case) as pod:
        hog_id = pod.container("hog", hog, memory_limit=32 << 20)
        calm_id = pod.container("calm", calm)
        hog_st = wait_exited(client, hog_id, 240)
        calm_st = wait_exited(client, calm_id, 240)
        if hog_st.reason != "OOMKilled":
            hog_st = wait_reason(client, hog_id, 30)
        hog_log = cri_log_lines(pod.log_path("hog"))
    problems = []
    if hog_st.reason != "OOMKilled" or hog_st.exit_code != 137:
        problems.append("hog: reason %r exit %d, expected OOMKilled 137 "
                        "(log %r)" % (hog_st.reason, hog_st.exit_code,
                                      hog_log))
    if ("stdout", "F", "hog-start") not in hog_log:
        problems.append("hog never started: log %r" % hog_log)
    if calm_st.reason != "Completed" or calm_st.exit_code != 0:
        problems.append("calm: reason %r exit %d, expected Completed 0" %
                        (calm_st.reason, calm_st.exit_code))
    problems += pod.cleanup_problems
    verdict(case, not problems, "; ".join(problems) or
            "hog (memory limit 32 MiB, dd of 64 MiB): OOMKilled, exit 137;"
            " calm beside it: Completed, exit 0")


def ctr_memory_limit(cid, timeout_s=60):
    """memory.limit_in_bytes as `ctr task metrics` reports it: the shim's
    Stats of the container, its guest cgroup's memory.max. Until its
    process runs in the guest (StartContainer answers before that) the
    cgroup is not there and ctr says "no metrics received": asked again."""
    deadline = time.monotonic() + timeout_s
    while True:
        r = subprocess.run(["ctr", "-n", "k8s.io", "task", "metrics", cid],
                           capture_output=True, text=True, timeout=60,
                           check=False)
        for line in r.stdout.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "memory.limit_in_bytes":
                return int(parts[1])
        if time.monotonic() > deadline:
            raise CriError("ctr task metrics %s: no memory.limit_in_bytes"
                           " after %d s (status %d: %s %s)" %
                           (cid, timeout_s, r.returncode, r.stdout[-200:],
                            r.stderr[-200:]))
        time.sleep(1)


def case_pod_update(client, args, case):
    """UpdateContainerResources on a running app container: its guest
    cgroup's memory.max goes from the 64 MiB it was created with to 48 MiB
    (read back through the shim's Stats, `ctr task metrics`), and a CPU
    quota is accepted; the container keeps running."""
    with Pod(client, args, case) as pod:
        cid = pod.container("resized", ["sleep", "600"],
                            memory_limit=64 << 20)
        before = ctr_memory_limit(cid)
        res = cri.LinuxContainerResources(memory_limit_in_bytes=48 << 20,
                                          cpu_period=100000,
                                          cpu_quota=50000)
        client.runtime("UpdateContainerResources",
                       cri.UpdateContainerResourcesRequest(
                           container_id=cid, linux=res))
        after = ctr_memory_limit(cid)
        state = client.runtime("ContainerStatus", cri.ContainerStatusRequest(
            container_id=cid)).status.state
    problems = []
    if before != 64 << 20:
        problems.append("memory limit %d at create, expected %d" %
                        (before, 64 << 20))
    if after != 48 << 20:
        problems.append("memory limit %d after the update, expected %d" %
                        (after, 48 << 20))
    if state != cri.CONTAINER_RUNNING:
        problems.append("container %s after the update" %
                        cri.ContainerState.Name(state))
    problems += pod.cleanup_problems
    verdict(case, not problems, "; ".join(problems) or
            "guest cgroup memory.max %d at create, %d after"
            " UpdateContainerResources (with a CPU quota of 50 ms per"
            " 100 ms); still RUNNING" % (before, after))


# ---- pods from VM templates (docs/template.md, "Containers and pods") ----
# The handlers' runtime configurations (tests/oci/containerd.toml,
# l1-tests.sh) share one template store.
TEMPLATE_STORE = "/var/lib/hintvm/templates"
TEMPLATE_KERNEL = "/var/lib/hintvm/vmlinuz-template"


def templates():
    """The store's templates: {key: sha256 of its memory file}."""
    out = {}
    if not os.path.isdir(TEMPLATE_STORE):
        return out
    for key in sorted(os.listdir(TEMPLATE_STORE)):
        if key.startswith("."):
            continue
        r = subprocess.run(["sha256sum",
                            os.path.join(TEMPLATE_STORE, key, "memory")],
                           capture_output=True, text=True, timeout=120,
                           check=False)
        out[key] = r.stdout.split()[0] if r.stdout else "?"
    return out


# What each template pod's first container prints: its random bytes
# (the guest's CRNG after the host's reseed), whether it sees what a
# container of an earlier pod left in the VM's memory (/dev/shm is a
# tmpfs in guest RAM), then it leaves its own mark there.
TEMPLATE_PROBE = ("echo rand=$(head -c 16 /dev/urandom | od -An -tx1 |"
                  " tr -d ' \\n'); if [ -e /dev/shm/clone-mark ]; then"
                  " echo saw=$(cat /dev/shm/clone-mark); else echo saw=none;"
                  " fi; echo $HOSTNAME-$$ > /dev/shm/clone-mark; exit 4")


def template_pod(client, args, case, name, handler):
    """A pod of two containers (the probe, and one printing and exiting)
    on HANDLER: (probe's stdout lines, problems, seconds to both
    exits)."""
    t0 = time.monotonic()
    problems = []
    with Pod(client, args, name, handler) as pod:
        probe = pod.container("probe", ["sh", "-c", TEMPLATE_PROBE])
        other = pod.container("other", ["sh", "-c",
                                        "echo other-$(uname -r); exit 0"])
        st_probe = wait_exited(client, probe, 240)
        st_other = wait_exited(client, other, 240)
        elapsed = time.monotonic() - t0
        lines = cri_log_lines(pod.log_path("probe"))
        other_lines = cri_log_lines(pod.log_path("other"))
    if st_probe.exit_code != 4 or st_other.exit_code != 0:
        problems.append("%s: exit codes %d and %d, expected 4 and 0" %
                        (name, st_probe.exit_code, st_other.exit_code))
    if not any(t.startswith("other-") for _, _, t in other_lines):
        problems.append("%s: the second container printed %r" %
                        (name, other_lines))
    problems += pod.cleanup_problems
    return [t for st, _, t in lines if st == "stdout"], problems, elapsed


def case_pod_template(client, args, case):
    """Two pods of two containers each from one VM template: the first
    pod's sandbox makes it (booted to its agent, snapshotted), the second
    finds it; the template's memory file is the same after both (a clone
    writes only its private copy), the second pod's container does not
    see the mark the first left in its VM's memory, and their random
    bytes differ (each clone's CRNG reseeded by the host)."""
    before = templates()
    out1, problems, s1 = template_pod(client, args, case, case + "-a",
                                      "hintvm-template")
    made = templates()
    out2, p2, s2 = template_pod(client, args, case, case + "-b",
                                "hintvm-template")
    problems += p2
    after = templates()
    new = [k for k in made if k not in before]
    log(case, "first pod %r (%.1f s), second %r (%.1f s)" %
        (out1, s1, out2, s2))
    if len(new) != 1:
        problems.append("the first pod made %d templates, expected 1: %r"
                        % (len(new), made))
    elif after != made:
        problems.append("the second pod changed the store or the template's"
                        " memory: %r then %r" % (made, after))
    rand = [o for o in out1 + out2 if o.startswith("rand=")]
    if len(rand) != 2 or rand[0] == rand[1]:
        problems.append("random bytes %r: expected two that differ" % rand)
    if "saw=none" not in out2:
        problems.append("the second pod's container saw %r in its VM's"
                        " /dev/shm, expected none" % out2)
    verdict(case, not problems, "; ".join(problems) or
            "pods from template %s: the first made it (%.1f s to both"
            " containers' exits), the second restored it (%.1f s); its"
            " memory unchanged, no mark of the first clone in the second,"
            " random bytes differ" % (new[0][:12], s1, s2))


def case_pod_template_off(client, args, case):
    """template = off: the pod boots its VM and makes no template."""
    before = templates()
    out, problems, secs = template_pod(client, args, case, case,
                                       "hintvm-template-off")
    after = templates()
    if after != before:
        problems.append("the store changed with templating off: %r then %r"
                        % (before, after))
    if not any(o.startswith("rand=") for o in out):
        problems.append("the probe printed %r" % out)
    verdict(case, not problems, "; ".join(problems) or
            "template = off: the pod ran from a booted VM (%.1f s), the"
            " store untouched" % secs)


def case_pod_template_kernel(client, args, case):
    """A kernel changed in place makes a new template on the next pod
    and the old one, whose key can no longer match, is removed."""
    shutil.copyfile("/boot/vmlinuz", TEMPLATE_KERNEL)
    _, problems, _ = template_pod(client, args, case, case + "-a",
                                  "hintvm-template-kernel")
    first = templates()
    # Trailing bytes: the loader reads what the header announces.
    with open(TEMPLATE_KERNEL, "ab") as f:
        f.write(b"\0" * 4096)
    _, p2, _ = template_pod(client, args, case, case + "-b",
                            "hintvm-template-kernel")
    problems += p2
    second = templates()
    gone = [k for k in first if k not in second]
    new = [k for k in second if k not in first]
    if len(new) != 1 or len(gone) != 1:
        problems.append("templates %r before the change, %r after: expected"
                        " one new and the old one removed" %
                        (sorted(first), sorted(second)))
    verdict(case, not problems, "; ".join(problems) or
            "the kernel changed: template %s made, the stale %s removed" %
            (new[0][:12], gone[0][:12]))


CASES = {
    "cri-version": case_version,
    "cri-pod-run": case_pod_run,
    "cri-pod-one-vm": case_pod_one_vm,
    "cri-pod-localhost": case_pod_localhost,
    "cri-pod-exec-sync": case_pod_exec_sync,
    "cri-pod-oom": case_pod_oom,
    "cri-pod-update": case_pod_update,
    "cri-pod-template": case_pod_template,
    "cri-pod-template-off": case_pod_template_off,
    "cri-pod-template-kernel": case_pod_template_kernel,
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", default="/run/containerd/containerd.sock")
    p.add_argument("--image", required=True)
    p.add_argument("--pause", required=True)
    p.add_argument("--handler", default="hintvm")
    p.add_argument("--logs", default="/var/log/pods")
    p.add_argument("cases", nargs="+")
    args = p.parse_args()
    for name in args.cases:
        if name not in CASES:
            print("cri-test.py: unknown case %r, expected one of %s" %
                  (name, ", ".join(sorted(CASES))), file=sys.stderr)
            return 2
    client = Cri(args.socket)
    for name in args.cases:
        try:
            CASES[name](client, args, name)
        except (CriError, OSError) as e:
            log(name, e)
            verdict(name, False, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
