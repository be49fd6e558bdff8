"""Starting and stopping the real daemons the fleet tests talk to (munged, slurmctld, slurmd,
prometheus-node-exporter) — each by the pid it reports, never by name. A daemon that cannot start
makes the test skip with the daemon's own message (its log tail), never pass silently."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_programs(*names: str) -> dict[str, str]:
    """{name: path} for programs looked up on PATH and in the sbin directories; skips when one is missing."""
    found, missing = {}, []
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/local/sbin"])
    for name in names:
        path = shutil.which(name, path=search)
        (found.__setitem__(name, path) if path else missing.append(name))
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (scripts/install_dependencies.sh installs them)")
    return found


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as error:
        return f"({path}: {error})"


def wait_for(predicate, timeout: float, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return None


@dataclass
class Daemons:
    """Daemons started by one test, stopped in reverse order by pid."""

    started: list[tuple[str, int]] = field(default_factory=list)
    processes: list[subprocess.Popen] = field(default_factory=list)

    def adopt_pid_file(self, name: str, pid_file: Path, log: Path, timeout: float = 15) -> int:
        """A forking daemon writes its pid file; skips (with its log) when it never does or dies."""
        pid = wait_for(lambda: _read_pid(pid_file), timeout)
        if not pid:
            pytest.skip(f"{name} did not start (no pid in {pid_file}); its log:\n{tail(log)}")
        self.started.append((name, pid))
        died = wait_for(lambda: not _alive(pid), 1.0)
        if died:  # it exited within a second of writing its pid
            pytest.skip(f"{name} exited right after starting; its log:\n{tail(log)}")
        return pid

    def spawn(self, name: str, command: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
        """A foreground daemon, its output in `log`."""
        handle = open(log, "wb")  # noqa: SIM115 - kept open for the daemon's lifetime
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        handle.close()
        self.processes.append(process)
        self.started.append((name, process.pid))
        return process

    def stop_all(self):
        for name, pid in reversed(self.started):
            _stop(pid)
        for process in self.processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.started.clear()


def _read_pid(pid_file: Path) -> int | None:
    try:
        text = pid_file.read_text().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except OSError:
        return False


def _stop(pid: int):
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if wait_for(lambda: not _alive(pid), grace):
            return
