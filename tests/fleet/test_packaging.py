"""The Kubernetes manifests (packaging/kubernetes/) validated offline with kubernetes-validate
against a current Kubernetes version, in strict mode (unknown fields are errors), plus what the
issue asks of them: GPU nodes only, the nvidia runtime class, a read-only root, no privilege beyond
what discovery needs, the report to stdout, the textfile to a hostPath. The Containerfile is read
with Docker's own parser (the `dockerfile` package: an image cannot be built here, there is no
container engine) and must install the .deb. Shell scripts pass shellcheck where it is installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import SOURCE_DIR, SYSTEM_CTK, describe, require_binary
from fleet_harness import fake_driver_dir

KUBERNETES = SOURCE_DIR / "packaging" / "kubernetes"
MANIFESTS = sorted(KUBERNETES.glob("*.yaml"))
#: A current Kubernetes release; kubernetes-validate ships the schemas of each.
KUBERNETES_VERSION = "1.33.0"
SCRIPTS = [SOURCE_DIR / "packaging" / "slurm" / "cudadiag-healthcheck.sh", KUBERNETES / "cudadiag-node.sh",
           SOURCE_DIR / "examples" / "slurm" / "cudadiag-fleet.sbatch"]


def documents(path: Path) -> list[dict]:
    import yaml

    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def pod_spec(doc: dict) -> dict:
    return doc["spec"]["template"]["spec"]


def test_manifests_validate_against_a_current_kubernetes():
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    assert MANIFESTS, f"no manifests under {KUBERNETES}"
    kinds = []
    for path in MANIFESTS:
        for doc in documents(path):
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)  # raises on any error
            kinds.append(doc["kind"])
    assert {"DaemonSet", "Job", "Namespace"} <= set(kinds)


def test_the_cli_validator_agrees():
    validator = shutil.which("kubernetes-validate", path=str(Path(__import__("sys").executable).parent))
    if validator is None:
        pytest.skip("kubernetes-validate is not installed in this venv")
    done = subprocess.run([validator, "--strict", "-k", KUBERNETES_VERSION, *map(str, MANIFESTS)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["DaemonSet", "Job"])
def test_gpu_nodes_only_and_minimal_privileges(kind):
    doc = next(d for p in MANIFESTS for d in documents(p) if d["kind"] == kind)
    spec = pod_spec(doc)
    assert spec["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert spec["runtimeClassName"] == "nvidia"
    assert spec["automountServiceAccountToken"] is False
    assert not spec.get("hostNetwork") and not spec.get("hostPID") and not spec.get("hostIPC")
    for container in spec["containers"]:
        security = container["securityContext"]
        assert security["readOnlyRootFilesystem"] is True
        assert security["allowPrivilegeEscalation"] is False
        assert security.get("privileged", False) is False
        assert security["capabilities"]["drop"] == ["ALL"] and not security["capabilities"].get("add")


def test_daemonset_writes_the_textfile_to_a_hostpath_and_the_report_to_stdout():
    doc = next(d for p in MANIFESTS for d in documents(p) if d["kind"] == "DaemonSet")
    spec = pod_spec(doc)
    volumes = {v["name"]: v for v in spec["volumes"]}
    container = spec["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert volumes["textfile"]["hostPath"]["path"] == "/var/lib/node_exporter/textfile"
    assert env["CUDADIAG_TEXTFILE"].startswith(mounts["textfile"] + "/")
    assert doc["metadata"]["labels"]["app"] == "cudadiag"  # kubectl logs -l app=cudadiag --prefix
    loop = (KUBERNETES / "cudadiag-node.sh").read_text()
    assert "--json" in loop and "--prometheus" in loop


def test_containerfile_installs_the_deb():
    dockerfile = pytest.importorskip("dockerfile")
    commands = dockerfile.parse_file(str(SOURCE_DIR / "packaging" / "Containerfile"))
    names = [c.cmd.upper() for c in commands]
    assert names.count("FROM") == 1 and "ENTRYPOINT" in names
    copies = [" ".join(c.value) for c in commands if c.cmd.upper() == "COPY"]
    assert any("CUDADIAG_DEB" in c for c in copies), copies
    runs = " ".join(" ".join(c.value) for c in commands if c.cmd.upper() == "RUN")
    assert "apt-get install" in runs and "/tmp/cudadiag.deb" in runs
    entry = next(c for c in commands if c.cmd.upper() == "ENTRYPOINT")
    assert entry.json and entry.value == ("/usr/share/cudadiag/kubernetes/cudadiag-node.sh",)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_scripts_pass_shellcheck(script):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed")
    done = subprocess.run([shellcheck, str(script)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout


def node_condition_script(tmp_path: Path) -> Path:
    """The node-problem-detector plugin of cudadiag-node-condition.yaml, as the pod mounts it."""
    config = next(d for p in MANIFESTS for d in documents(p)
                  if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "cudadiag-node-condition")
    script = tmp_path / "cudadiag-repair.sh"
    script.write_text(config["data"]["cudadiag-repair.sh"])
    script.chmod(0o755)
    monitor = json.loads(config["data"]["cudadiag-repair.json"])
    conditions = {c["type"] for c in monitor["conditions"]}
    assert {rule["condition"] for rule in monitor["rules"]} == conditions
    assert all(rule["path"] == "/config/" + script.name for rule in monitor["rules"])
    return script


def test_node_condition_plugin_reads_the_repair_classes_cudadiag_wrote(tmp_path):
    """The node condition example: cudadiag (the fake driver failing cuInit with 999, whose repair
    class is reboot) writes the textfile; the plugin says "reboot needed" naming the finding (exit 1),
    and no other class; a healthy report clears it (0); no textfile or a stale one is unknown (2)."""
    binary = require_binary()
    script = node_condition_script(tmp_path)
    driver = fake_driver_dir(tmp_path, "580.95.05")
    textfile = tmp_path / "cudadiag.prom"

    def check(driver_mode: str) -> None:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CUDA_HOME": str(SYSTEM_CTK),
               "LD_LIBRARY_PATH": str(driver), "CUDADIAG_FAKE_CUDA": driver_mode}
        done = subprocess.run([str(binary), "--no-selftest", "--prometheus", str(textfile)], env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode in (0, 1), describe(done)

    def plugin(*classes: str) -> subprocess.CompletedProcess:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CUDADIAG_TEXTFILE": str(textfile)}
        return subprocess.run(["sh", str(script), *classes], env=env, capture_output=True, text=True, timeout=30,
                              check=False)

    check("error:999")
    assert 'repair="reboot"} 1' in textfile.read_text()
    reboot = plugin("reboot")
    assert reboot.returncode == 1 and "driver.init_failed" in reboot.stdout, reboot
    assert plugin("reset_gpu").returncode == 0
    assert plugin("hardware_inspection").returncode == 0

    check("ok")
    assert plugin("reboot").returncode == 0, plugin("reboot")

    stale = textfile.read_text()
    stale = re.sub(r"(?m)^cudadiag_last_run_timestamp_seconds .*$", "cudadiag_last_run_timestamp_seconds 1000", stale)
    textfile.write_text(stale)
    assert plugin("reboot").returncode == 2
    textfile.unlink()
    missing = plugin("reboot")
    assert missing.returncode == 2 and "no cudadiag textfile" in missing.stdout
