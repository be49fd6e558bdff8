"""Node-health checks that peers make (GPUd, DCGM, node-problem-detector): the NVIDIA driver's Xid/SXid events from a kernel
log (a fixture of lines public reports posted, named by CUDADIAG_KMSG: no test reads this machine's
log or needs root), the CUDA variables that change behaviour (listed, and raised by context), and
every finding's repair class. Each report is validated against the schema by parse_report."""

from __future__ import annotations

from pathlib import Path

from cudadiag_harness import SOURCE_DIR, clean_env, run_report

PUBLIC_LOG = SOURCE_DIR / "tests" / "fixtures" / "kernel-log" / "public-reports.log"


def xid_findings(doc: dict) -> dict[int, dict]:
    return {f["evidence"]["code"]: f for f in doc["findings"] if f["id"] in ("gpu.xid", "nvswitch.sxid")}


def test_xid_events_from_a_saved_log_are_findings_with_repair_classes():
    doc = run_report(["--no-load"], env=clean_env(CUDADIAG_KMSG=str(PUBLIC_LOG)), allowed_exit=(1,))
    log = doc["kernel_log"]
    assert log["status"] == "read" and log["source"] == str(PUBLIC_LOG)
    assert log["event_count"] == 13 and len(log["events"]) == 13
    found = xid_findings(doc)
    assert sorted(found) == [13, 31, 45, 48, 64, 79, 109, 12028, 22013]
    assert (found[48]["severity"], found[48]["repair"]) == ("error", "reset_gpu")
    assert (found[79]["severity"], found[79]["repair"]) == ("error", "reboot")
    assert (found[13]["severity"], found[13]["repair"]) == ("warning", "restart_process")
    assert found[13]["evidence"]["count"] == 3
    assert (found[45]["severity"], found[45]["repair"]) == ("info", "none")
    assert found[64]["repair"] == "hardware_inspection"
    assert found[22013]["id"] == "nvswitch.sxid" and found[22013]["severity"] == "info"
    # An SXid takes its code's class from NVIDIA's SXid catalogue (the Fabric Manager user guide).
    assert (found[12028]["severity"], found[12028]["repair"]) == ("warning", "reset_gpu")
    assert found[12028]["evidence"]["sxid_class"] == "non_fatal" and found[12028]["evidence"]["known_code"]
    assert doc["summary"]["exit_code"] == 1  # the error-level Xids


def test_an_unreadable_log_says_so_and_is_no_finding(tmp_path: Path):
    doc = run_report(["--no-load"], env=clean_env(CUDADIAG_KMSG=str(tmp_path / "absent")))
    assert doc["kernel_log"]["status"] == "unreadable"
    assert doc["kernel_log"]["reason"] == "No such file or directory"
    assert not xid_findings(doc)


def test_no_load_reads_no_kernel_log():
    doc = run_report(["--no-load"], env=clean_env())
    assert doc["kernel_log"]["status"] == "not_read" and doc["kernel_log"]["reason"]
    assert doc["kernel_log"]["events"] == []


def test_behaviour_variables_listed_and_raised_by_context():
    quiet = run_report(["--no-load"], env=clean_env())
    assert quiet["environment"]["behaviour_variables"] == []
    assert not [f for f in quiet["findings"] if f["id"] == "env.behaviour_variable"]

    env = clean_env(CUDA_LAUNCH_BLOCKING="1", CUDA_INJECTION64_PATH="/opt/tracer/libinject.so",
                    CUDA_DEVICE_MAX_CONNECTIONS="1")
    for context, severity in (("interactive", "info"), ("ci", "warning"), ("fleet", "warning")):
        doc = run_report(["--no-load", "--context", context], env=env)
        listed = {v["name"]: v for v in doc["environment"]["behaviour_variables"]}
        assert sorted(listed) == ["CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_INJECTION64_PATH", "CUDA_LAUNCH_BLOCKING"]
        assert listed["CUDA_DEVICE_MAX_CONNECTIONS"]["class"] == "performance"
        assert listed["CUDA_INJECTION64_PATH"]["value"] == "/opt/tracer/libinject.so"
        raised = {f["evidence"]["variable"]: f for f in doc["findings"] if f["id"] == "env.behaviour_variable"}
        assert sorted(raised) == ["CUDA_INJECTION64_PATH", "CUDA_LAUNCH_BLOCKING"], context
        assert {f["severity"] for f in raised.values()} == {severity}, context
        assert {f["repair"] for f in raised.values()} == {"fix_environment"}
    # CI=true alone makes the context ci.
    ci = run_report(["--no-load"], env=dict(env, CI="true"))
    assert {f["severity"] for f in ci["findings"] if f["id"] == "env.behaviour_variable"} == {"warning"}


def test_every_finding_carries_a_repair_class(tmp_path: Path):
    # A CUDA_HOME that does not exist is a finding; its class is the table's.
    doc = run_report(["--no-load"], env=clean_env(CUDA_HOME=str(tmp_path / "nowhere")), allowed_exit=(0, 1))
    assert doc["findings"], "expected at least one finding"
    for finding in doc["findings"]:
        assert finding["repair"] in {"none", "fix_environment", "reinstall_package", "restart_process", "reset_gpu",
                                     "reboot", "hardware_inspection"}, finding


def fake_gpu_roots(root: Path, on_bus: int, initialised: int) -> dict:
    """Fake /sys/bus/pci/devices and /proc/driver/nvidia/gpus: `on_bus` NVIDIA 3D controllers and an
    NVSwitch (no GPU), `initialised` of them with a driver directory; the variables that name them."""
    pci = root / "pci"
    gpus = root / "gpus"
    gpus.mkdir(parents=True)
    for index in range(on_bus):
        address = f"0000:{0x3b + index:02x}:00.0"
        device = pci / address
        device.mkdir(parents=True)
        (device / "vendor").write_text("0x10de\n")
        (device / "class").write_text("0x030200\n")
        if index < initialised:
            (gpus / address).mkdir()
    switch = pci / "0000:86:00.0"
    switch.mkdir(parents=True)
    (switch / "vendor").write_text("0x10de\n")
    (switch / "class").write_text("0x068000\n")
    return {"CUDADIAG_PCI_DEVICES": str(pci), "CUDADIAG_NVIDIA_GPUS": str(gpus)}


def test_expected_gpus_name_the_layer_that_lost_them(tmp_path: Path):
    env = clean_env(**fake_gpu_roots(tmp_path, on_bus=4, initialised=3))
    doc = run_report(["--no-load", "--expect-gpus", "4"], env=env, allowed_exit=(1,))
    missing = [f for f in doc["findings"] if f["id"] == "gpu.missing"]
    assert len(missing) == 1, doc["findings"]
    assert missing[0]["severity"] == "error" and missing[0]["repair"] == "reboot"
    evidence = missing[0]["evidence"]
    assert (evidence["pci"], evidence["driver"], evidence["lost_at"]) == (4, 3, "driver")
    assert "the NVIDIA driver sees 3 where the PCI bus sees 4" in missing[0]["message"]

    fine = run_report(["--no-load", "--expect-gpus", "3"], env=env)
    assert not [f for f in fine["findings"] if f["id"] == "gpu.missing"]


def test_expect_gpus_from_a_policy_file(tmp_path: Path):
    env = clean_env(**fake_gpu_roots(tmp_path, on_bus=2, initialised=2))
    policy = tmp_path / "node.toml"
    policy.write_text("expect_gpus = 3\n")
    doc = run_report(["--no-load", "--policy", str(policy)], env=env, allowed_exit=(1,))
    missing = [f for f in doc["findings"] if f["id"] == "gpu.missing"]
    assert len(missing) == 1 and missing[0]["repair"] == "hardware_inspection"
    assert missing[0]["evidence"]["lost_at"] == "pci"
    policy.write_text("expect_gpus = 0\n")
    from cudadiag_harness import run
    bad = run(["--no-load", "--policy", str(policy)], env=env)
    assert bad.returncode == 2 and b"expect_gpus" in bad.stderr
