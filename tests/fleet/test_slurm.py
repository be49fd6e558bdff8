"""Slurm for real: the test starts munged, slurmctld and two slurmd (nodes n1 and n2, both on this
machine; proctrack/linuxproc, task/none, no cgroups) from a generated slurm.conf, then
  (a) srun --label --ntasks-per-node=1 -N 2 cudadiag --json | cudadiag fleet -   gets both tasks' reports;
  (c) the sbatch example (examples/slurm/cudadiag-fleet.sbatch) does the same as a batch job;
  (b) packaging/slurm/cudadiag-healthcheck.sh, run by slurmd as its HealthCheckProgram, drains the
      nodes with reason "cudadiag: driver.init_failed" while the fake driver's cuInit fails, and
      resumes them when it is healthy again.
Every daemon is stopped by the pid it started with. A daemon that cannot start on this machine
makes the test skip with that daemon's own log."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest

from cudadiag_harness import SOURCE_DIR, SYSTEM_CTK, describe, require_binary
from daemons import Daemons, free_port, require_programs, tail, wait_for
from fleet_harness import fake_driver_dir, parse_fleet

HEALTHCHECK = SOURCE_DIR / "packaging" / "slurm" / "cudadiag-healthcheck.sh"
SBATCH_EXAMPLE = SOURCE_DIR / "examples" / "slurm" / "cudadiag-fleet.sbatch"
NODES = ["n1", "n2"]


class Cluster:
    def __init__(self, root: Path, programs: dict[str, str]):
        self.root = root
        self.programs = programs
        self.conf = root / "slurm.conf"
        self.env = {"PATH": f"{Path(programs['srun']).parent}:/usr/sbin:/usr/bin:/sbin:/bin",
                    "SLURM_CONF": str(self.conf), "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/root")}

    def run(self, *command: str, env: dict | None = None, timeout: float = 60, stdin=None) -> subprocess.CompletedProcess:
        merged = dict(self.env, **(env or {}))
        try:
            return subprocess.run(list(command), env=merged, capture_output=True, timeout=timeout, check=False,
                                  stdin=stdin if stdin is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{command} did not finish within {timeout}s")

    def node(self, name: str) -> str:
        return self.run(self.programs["scontrol"], "-o", "show", "node", name).stdout.decode()

    def states(self) -> dict[str, str]:
        out = self.run(self.programs["sinfo"], "-h", "-N", "-o", "%N %T").stdout.decode().split("\n")
        return dict(line.split(maxsplit=1) for line in out if line.strip())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    programs = require_programs("munged", "slurmctld", "slurmd", "srun", "sbatch", "scontrol", "sinfo")
    binary = require_binary()
    root = tmp_path_factory.mktemp("slurm")
    daemons = Daemons()
    try:
        yield start_cluster(root, programs, daemons, binary)
    finally:
        daemons.stop_all()


def start_cluster(root: Path, programs: dict[str, str], daemons: Daemons, binary: Path) -> Cluster:
    munge = root / "munge"
    munge.mkdir(mode=0o700)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    socket_path = munge / "munge.socket"
    subprocess.run([programs["munged"], f"--key-file={key}", f"--socket={socket_path}",
                    f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}",
                    f"--seed-file={munge / 'seed'}", "--force"], capture_output=True, timeout=30, check=False)
    daemons.adopt_pid_file("munged", munge / "munged.pid", munge / "munged.log")

    for directory in ("state", "spool", "log"):
        (root / directory).mkdir()
    host = socket.gethostname().split(".")[0]
    healthcheck_wrapper = root / "healthcheck-wrapper.sh"
    # slurmd runs the health check with an empty environment: the wrapper points the real script at
    # the settings file the test rewrites (healthy or failing driver).
    healthcheck_wrapper.write_text(f"#!/bin/sh\nCUDADIAG_HEALTHCHECK_CONFIG={root / 'healthcheck.conf'}\n"
                                   f"export CUDADIAG_HEALTHCHECK_CONFIG\nexec {HEALTHCHECK}\n")
    healthcheck_wrapper.chmod(0o755)
    nodes = "\n".join(f"NodeName={name} NodeHostname={host} NodeAddr=127.0.0.1 Port={free_port()} CPUs=1 State=UNKNOWN"
                      for name in NODES)
    cluster = Cluster(root, programs)
    cluster.conf.write_text(f"""ClusterName=cudadiagtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket_path}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/linear
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
StateSaveLocation={root / 'state'}
SlurmdSpoolDir={root / 'spool'}/%n
SlurmctldPidFile={root / 'slurmctld.pid'}
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root / 'log' / 'slurmctld.log'}
SlurmdLogFile={root / 'log'}/slurmd-%n.log
HealthCheckProgram={healthcheck_wrapper}
HealthCheckInterval=2
HealthCheckNodeState=ANY
{nodes}
PartitionName=debug Nodes={','.join(NODES)} Default=YES MaxTime=INFINITE State=UP
""")
    write_healthcheck_conf(cluster, binary, healthy=True)
    start = cluster.run(programs["slurmctld"], "-f", str(cluster.conf))
    if start.returncode != 0:
        pytest.skip(f"slurmctld could not start: {start.stderr.decode(errors='replace')}"
                    f"\n{tail(root / 'log' / 'slurmctld.log')}")
    daemons.adopt_pid_file("slurmctld", root / "slurmctld.pid", root / "log" / "slurmctld.log")
    for name in NODES:
        started = cluster.run(programs["slurmd"], "-f", str(cluster.conf), "-N", name)
        if started.returncode != 0:
            pytest.skip(f"slurmd -N {name} could not start: {started.stderr.decode(errors='replace')}"
                        f"\n{tail(root / 'log' / f'slurmd-{name}.log')}")
        daemons.adopt_pid_file(f"slurmd {name}", root / f"slurmd-{name}.pid", root / "log" / f"slurmd-{name}.log")
    idle = wait_for(lambda: all(cluster.states().get(n, "").startswith("idle") for n in NODES), 60, 0.5)
    if not idle:
        pytest.skip(f"the nodes never became idle ({cluster.states()}); slurmctld's log:\n"
                    f"{tail(root / 'log' / 'slurmctld.log')}\nslurmd n1:\n{tail(root / 'log' / 'slurmd-n1.log')}")
    return cluster


def node_environment(cluster: Cluster, driver_mode: str = "ok") -> dict:
    driver = fake_driver_dir(cluster.root / "driver", "580.95.05")
    return {"CUDA_HOME": str(SYSTEM_CTK), "LD_LIBRARY_PATH": str(driver), "CUDADIAG_FAKE_CUDA": driver_mode}


def write_healthcheck_conf(cluster: Cluster, binary: Path, healthy: bool):
    env = node_environment(cluster, "ok" if healthy else "error:999")
    lines = [f"CUDADIAG={binary}", f"SCONTROL={cluster.programs['scontrol']}", f"SLURM_CONF={cluster.conf}",
             f"CUDADIAG_TEXTFILE={cluster.root / 'cudadiag.prom'}"]
    lines += [f"{key}={value}" for key, value in env.items()]
    lines.append("export SLURM_CONF " + " ".join(env))
    (cluster.root / "healthcheck.conf").write_text("\n".join(lines) + "\n")


def test_srun_one_task_per_node_feeds_fleet(cluster):
    binary = str(require_binary())
    srun = cluster.run(cluster.programs["srun"], "--label", "--ntasks-per-node=1", "-N", str(len(NODES)),
                       binary, "--json", "--no-selftest", env=node_environment(cluster), timeout=120)
    assert srun.returncode in (0, 1), describe(srun)
    fleet = subprocess.run([binary, "--json", "fleet", "-"], input=srun.stdout, capture_output=True, timeout=60,
                           check=False)
    doc = parse_fleet(fleet)
    assert doc["counts"]["nodes"] == len(NODES), describe(fleet)
    assert doc["counts"]["input_problems"] == 0, doc["input_problems"]
    assert sorted(node["source"] for node in doc["nodes"]) == [f"stdin: task {t}" for t in range(len(NODES))]
    assert len(doc["groups"]) == 1  # the same machine twice: one fingerprint


def test_sbatch_example_runs_the_fleet(cluster):
    binary = require_binary()
    output = cluster.root / "sbatch-fleet.json"
    env = dict(node_environment(cluster), CUDADIAG=str(binary), CUDADIAG_FLEET_OUTPUT=str(output))
    result = cluster.run(cluster.programs["sbatch"], "--wait", "-N", str(len(NODES)), f"--chdir={cluster.root}",
                         f"--output={cluster.root / 'sbatch-%j.out'}", str(SBATCH_EXAMPLE), env=env, timeout=180)
    outputs = "\n".join(tail(p, 40) for p in cluster.root.glob("sbatch-*.out"))
    assert result.returncode in (0, 1), describe(result) + "\n" + outputs
    assert output.is_file(), f"the batch job wrote no {output}\n{outputs}"
    doc = json.loads(output.read_text())
    assert doc["kind"] == "fleet" and doc["counts"]["nodes"] == len(NODES), outputs


def reason_of(cluster: Cluster, node: str) -> str:
    match = re.search(r"Reason=(.*?)( \[|$)", cluster.node(node))
    return match.group(1) if match else ""


def test_healthcheck_drains_on_a_failing_driver_and_resumes_when_healthy(cluster):
    binary = require_binary()
    write_healthcheck_conf(cluster, binary, healthy=False)
    drained = wait_for(lambda: all(reason_of(cluster, n) == "cudadiag: driver.init_failed" and
                                   "DRAIN" in cluster.node(n) for n in NODES), 60, 0.5)
    assert drained, f"not drained: {[cluster.node(n) for n in NODES]}\n{tail(cluster.root / 'log' / 'slurmd-n1.log')}"
    # The health check also wrote the node_exporter textfile, atomically.
    prom = (cluster.root / "cudadiag.prom").read_text()
    assert 'cudadiag_findings{id="driver.init_failed",severity="error",repair="reboot"} 1' in prom

    write_healthcheck_conf(cluster, binary, healthy=True)
    resumed = wait_for(lambda: all(cluster.states().get(n, "").startswith("idle") and not reason_of(cluster, n)
                                   for n in NODES), 60, 0.5)
    assert resumed, f"not resumed: {[cluster.node(n) for n in NODES]}"


def holds_for(predicate, seconds: float, interval: float = 0.5) -> bool:
    """Whether predicate() is true at every check over `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not predicate():
            return False
        time.sleep(interval)
    return bool(predicate())


def test_healthcheck_leaves_an_administrators_drain_alone(cluster):
    binary = require_binary()
    write_healthcheck_conf(cluster, binary, healthy=True)
    scontrol = cluster.programs["scontrol"]
    # A round begun under the previous test's failing configuration may still drain a node after
    # that test saw them all resumed (a loaded machine runs a round for seconds): the nodes must stay
    # idle, without a reason, for longer than a round before the administrator's drain, or this test
    # would see that round's drain and the healthy round that undoes it.
    def clean():
        return all(cluster.states().get(n, "").startswith("idle") and not reason_of(cluster, n) for n in NODES)
    settled = wait_for(lambda: holds_for(clean, 6), 90, 0.5)
    assert settled, f"the nodes never settled: {[cluster.node(n) for n in NODES]}"
    done = cluster.run(scontrol, "update", "nodename=n2", "state=drain", "reason=maintenance")
    assert done.returncode == 0, describe(done)
    try:
        # Several health-check rounds (every 2 s) later the administrator's drain is still there.
        wait_for(lambda: False, 6)
        assert reason_of(cluster, "n2") == "maintenance", cluster.node("n2")
    finally:
        cluster.run(scontrol, "update", "nodename=n2", "state=resume")
