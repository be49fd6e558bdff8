"""Prometheus for real: the test starts Debian's prometheus-node-exporter on a free loopback port
with --collector.textfile.directory, writes the textfile with `cudadiag --prometheus`, scrapes
/metrics over HTTP and parses it with prometheus_client's text parser — the format is checked by
real consumers, not by a regex of ours. The node_exporter is stopped by its pid."""

from __future__ import annotations

import os
import urllib.request

import pytest

from cudadiag_harness import describe, run
from daemons import Daemons, free_port, require_programs, tail, wait_for
from fleet_harness import node_env

METRICS = ["cudadiag_up", "cudadiag_findings", "cudadiag_component_info", "cudadiag_last_run_timestamp_seconds"]


@pytest.fixture
def node_exporter(tmp_path):
    programs = require_programs("prometheus-node-exporter")
    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    port = free_port()
    daemons = Daemons()
    log = tmp_path / "node_exporter.log"
    process = daemons.spawn("prometheus-node-exporter",
                            [programs["prometheus-node-exporter"], f"--web.listen-address=127.0.0.1:{port}",
                             f"--collector.textfile.directory={textfiles}", "--collector.disable-defaults",
                             "--collector.textfile"], log)
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        if not wait_for(lambda: process.poll() is not None or _get(url), 20, 0.2) or process.poll() is not None:
            pytest.skip(f"prometheus-node-exporter did not start; its log:\n{tail(log)}")
        yield url, textfiles, log
    finally:
        daemons.stop_all()


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode()
    except OSError:
        return None


def families(text: str) -> dict:
    from prometheus_client.parser import text_string_to_metric_families

    return {family.name: family for family in text_string_to_metric_families(text)}


def test_textfile_is_scraped_and_parsed(node_exporter, tmp_path):
    url, textfiles, log = node_exporter
    target = textfiles / "cudadiag.prom"
    env = node_env(tmp_path, CUDADIAG_FAKE_CUDA="error:999")
    result = run(["--no-selftest", "--prometheus", str(target)], env=env, timeout=60)
    assert result.returncode == 1, describe(result)
    assert not [p for p in textfiles.iterdir() if p.name != "cudadiag.prom"], "a temporary file was left behind"
    # Parsed by the library Prometheus users run, straight from the file ...
    local = families(target.read_text())
    for name in METRICS:
        assert name in local, f"{name} missing from {target}:\n{target.read_text()[:2000]}"
    # ... and as node_exporter serves it after reading the directory.
    scraped = wait_for(lambda: _get(url), 10)
    assert scraped, "no answer from node_exporter"
    metrics = families(scraped)
    errors = [s for s in metrics["node_textfile_scrape_error"].samples]
    assert errors and errors[0].value == 0, f"node_exporter could not read the textfile: {errors}\n{tail(log)}"
    up = metrics["cudadiag_up"].samples
    assert [s.value for s in up] == [1.0]
    findings = {(s.labels["id"], s.labels["severity"]): s.value for s in metrics["cudadiag_findings"].samples}
    assert findings.get(("driver.init_failed", "error")) == 1.0, findings
    info = {s.labels["name"]: s.labels for s in metrics["cudadiag_component_info"].samples if s.labels["kind"] == "dynamic_lib"}
    assert info["cuda"]["version"] == "580.95.05" and info["cuda"]["found_via"] == "LD_LIBRARY_PATH", info["cuda"]
    assert "nvrtc" in info and info["nvrtc"]["version"].startswith("13."), info.get("nvrtc")
    stamp = metrics["cudadiag_last_run_timestamp_seconds"].samples[0].value
    assert abs(stamp - os.path.getmtime(target)) < 120


def test_selftest_figures_are_scraped(node_exporter, tmp_path):
    """`cudadiag selftest --prometheus`: the jit test runs on this CPU machine with the real NVRTC and
    nvJitLink (the GPU tests skip), and its figures come out as cudadiag_selftest_value."""
    url, textfiles, _ = node_exporter
    target = textfiles / "selftest.prom"
    env = node_env(tmp_path, CUDADIAG_FAKE_CUDA="ok")
    result = run(["selftest", "--only", "jit", "--prometheus", str(target)], env=env, timeout=120)
    assert result.returncode in (0, 1), describe(result)
    local = families(target.read_text())
    values = local.get("cudadiag_selftest_value")
    if values is None:
        pytest.skip(f"the jit self-test produced no figures here:\n{result.stderr.decode(errors='replace')[-1500:]}")
    tests = {s.labels["test"] for s in values.samples}
    assert "jit" in tests
    scraped = families(wait_for(lambda: _get(url), 10))
    assert "cudadiag_selftest_value" in scraped
