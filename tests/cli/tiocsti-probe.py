#!/usr/bin/python3
"""Run hintvm with a pseudo-terminal as its controlling terminal and
stderr, as a user's shell would, and report what a TIOCSTI from inside it
left in that terminal's input queue: what the user's shell would read
once hintvm is gone.

usage: tiocsti-probe.py --self | HINTVM ARGS...

Prints one line: "status=N injected=BYTES report=LINE" (BYTES: what was
queued, "-" for nothing; LINE: hintvm's sandbox report, "-" for none).
--self: the probe's own TIOCSTI (root may type into any terminal), to show
that the witness sees an injection when there is one.
"""
import fcntl
import os
import pty
import subprocess
import sys
import termios
import time


def drain(fd):
    os.set_blocking(fd, False)
    data = b""
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    except (BlockingIOError, OSError):
        pass
    return data


def main():
    master, slave = pty.openpty()
    # The terminal's input as its reader sees it: no line editing.
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~(termios.ICANON | termios.ECHO)
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    status = 0
    if sys.argv[1:] == ["--self"]:
        fcntl.ioctl(slave, termios.TIOCSTI, b"#")
    else:
        def controlling_tty():
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        # stdin: a pipe that stays open, so that the console's input
        # thread runs and waits on it.
        proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=slave,
                                preexec_fn=controlling_tty)
        try:
            status = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
        proc.stdin.close()
        time.sleep(0.2)
    injected = drain(slave)
    output = drain(master).decode(errors="replace")
    report = next((l.strip() for l in output.splitlines()
                   if "sandbox:" in l), "-")
    # A killed process reports its signal negatively.
    if status < 0:
        status = 128 - status
    print(f"status={status} injected={injected.decode(errors='replace') or '-'} "
          f"report={report}")


if __name__ == "__main__":
    main()
