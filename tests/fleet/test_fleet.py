"""`cudadiag fleet` through the real binary, over node reports the tests make on this machine: three
healthy nodes, one whose driver is another version (the fake driver under another file name), one
whose LD_LIBRARY_PATH puts a CUDA 12 nvJitLink first (tests/fixtures/fake_nvjitlink12.c). The fleet
must name the two odd nodes and what differs, list the erroring node first, validate against
docs/schema/fleet.schema.json, and read the same reports as files, a directory, bundles, JSON lines
on stdin, and srun --label / kubectl logs --prefix prefixed lines, interleaved."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import describe, require_binary, run
from fleet_harness import make_node_report, node_env, parse_fleet, shadow_nvjitlink_dir

HEALTHY = ["gpu-node01", "gpu-node02", "gpu-node03"]


def system_only_ld_so_cache(tmp_path: Path) -> Path:
    """An ld.so.cache of the system's trusted directories only (no CUDA toolkit listed): every node of
    the test fleet uses it, so that the CUDA 12 directory on one node's LD_LIBRARY_PATH is what that
    node's loader finds first for nvJitLink."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    conf = tmp_path / "ld.so.conf"
    conf.write_text("")
    cache = tmp_path / "ld.so.cache"
    done = subprocess.run([ldconfig, "-C", str(cache), "-f", str(conf)], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not cache.is_file():
        pytest.skip(f"cannot build a test ld.so.cache with {ldconfig}: {done.stderr.strip()}")
    return cache


@pytest.fixture(scope="module")
def fleet_reports(tmp_path_factory) -> dict:
    """{hostname: report path} for the five nodes, made once for the module."""
    require_binary()
    root = tmp_path_factory.mktemp("fleet")
    cache = system_only_ld_so_cache(root)
    reports = root / "reports"
    reports.mkdir()
    made = {}
    healthy_env = node_env(root / "healthy")
    for name in HEALTHY:
        made[name] = reports / f"{name}.json"
        make_node_report(made[name], healthy_env, name, "--ld-so-cache", str(cache))
    made["gpu-node04"] = reports / "gpu-node04.json"
    make_node_report(made["gpu-node04"], node_env(root / "newer", driver_version="590.44.01"), "gpu-node04",
                     "--ld-so-cache", str(cache))
    made["gpu-node05"] = reports / "gpu-node05.json"
    make_node_report(made["gpu-node05"],
                     node_env(root / "shadow", extra_library_path=shadow_nvjitlink_dir(root / "shadow")),
                     "gpu-node05", "--ld-so-cache", str(cache))
    return made


def fleet_json(*args, stdin: bytes | None = None):
    if stdin is None:
        result = run(["--json", "fleet", *map(str, args)], timeout=60)
    else:
        result = subprocess.run([str(require_binary()), "--json", "fleet", *map(str, args)], input=stdin,
                                capture_output=True, timeout=60, check=False)
    return result, parse_fleet(result)


def group_of(doc: dict, node: str) -> dict:
    for group in doc["groups"]:
        if node in group["nodes"]:
            return group
    pytest.fail(f"{node} is in no group: {[g['nodes'] for g in doc['groups']]}")


def differs(group: dict) -> dict:
    return {d["field"]: d for d in group["differs"]}


def test_the_two_odd_nodes_are_named_with_what_differs(fleet_reports):
    result, doc = fleet_json(*fleet_reports.values())
    assert result.returncode == 1, describe(result)
    assert doc["counts"]["nodes"] == 5
    majority = doc["groups"][0]
    assert majority["majority"] and sorted(majority["nodes"]) == HEALTHY
    assert majority["hostlist"] == "gpu-node[01-03]"

    driver = group_of(doc, "gpu-node04")
    assert not driver["majority"] and driver["nodes"] == ["gpu-node04"]
    fields = differs(driver)
    assert fields["driver version"]["majority"] == "580.95.05"
    assert fields["driver version"]["value"] == "590.44.01"
    assert fields["driver version"]["core"] is True
    assert fields["driver branch"]["value"] == "590"
    # The full diff against the majority agrees: the LD_LIBRARY_PATH entries that point at the other
    # driver first (the likely cause), then the driver.
    causes = [d for d in driver["differences"] if d["area"] == "environment" and d["subject"] == "LD_LIBRARY_PATH"]
    assert driver["differences"][:len(causes)] == causes and causes, driver["differences"][:3]
    assert driver["differences"][len(causes)]["area"] == "driver", driver["differences"][:3]

    shadow = group_of(doc, "gpu-node05")
    assert shadow["nodes"] == ["gpu-node05"]
    fields = differs(shadow)
    assert fields["nvJitLink version"]["value"].startswith("12."), fields
    assert fields["nvJitLink version"]["majority"].startswith("13."), fields
    assert fields["nvJitLink found via"]["value"] == "LD_LIBRARY_PATH", fields
    assert "driver version" not in fields
    assert any(d["area"] == "components" and d["subject"] == "nvJitLink" for d in shadow["differences"])
    assert len(doc["groups"]) == 3
    assert doc["summary"]["status"] == "problem" and not doc["summary"]["uniform"]


def test_nodes_with_errors_come_first(fleet_reports):
    _, doc = fleet_json(*fleet_reports.values())
    statuses = [node["status"] for node in doc["nodes"]]
    rank = {"error": 0, "warning": 1, "ok": 2, "unknown": 3}
    assert [rank[s] for s in statuses] == sorted(rank[s] for s in statuses), statuses
    erroring = [node for node in doc["nodes"] if node["status"] == "error"]
    assert doc["counts"]["error_nodes"] == len(erroring)
    for node in erroring:
        assert node["errors"], node


def test_terminal_output_names_the_odd_nodes(fleet_reports):
    result = run(["fleet", *map(str, fleet_reports.values())], timeout=60)
    assert result.returncode == 1, describe(result)
    text = result.stdout.decode()
    assert "Majority (3 nodes): gpu-node[01-03]" in text, text
    assert "gpu-node04" in text and "590.44.01" in text
    assert "gpu-node05" in text and "nvJitLink version" in text
    assert "\033[" not in text  # not a TTY: no colour


def test_a_uniform_healthy_fleet_exits_0(fleet_reports, tmp_path):
    result, doc = fleet_json(*[fleet_reports[name] for name in HEALTHY])
    healthy = json.loads(fleet_reports[HEALTHY[0]].read_text())
    if healthy["summary"]["status"] == "error":
        pytest.skip(f"the healthy node has errors on this machine: {[f['id'] for f in healthy['findings'] if f['severity'] == 'error']}")
    assert result.returncode == 0, describe(result)
    assert doc["summary"] == {"status": "uniform", "uniform": True, "reasons": [], "exit_code": 0}
    assert len(doc["groups"]) == 1 and doc["groups"][0]["differences"] is None


def test_directory_bundle_and_json_lines_inputs(fleet_reports, tmp_path):
    directory = next(iter(fleet_reports.values())).parent
    _, from_directory = fleet_json(directory)
    assert from_directory["counts"]["nodes"] == 5
    # One JSON-lines file of all nodes (what `srun ... cudadiag --json > fleet.jsonl` saves when each
    # report is on one line) gives the same groups.
    lines = tmp_path / "fleet.jsonl"
    lines.write_text("".join(json.dumps(json.loads(p.read_text())) + "\n" for p in fleet_reports.values()))
    _, from_lines = fleet_json(lines)
    assert [g["nodes"] for g in from_lines["groups"]] == [g["nodes"] for g in from_directory["groups"]]
    _, from_stdin = fleet_json("-", stdin=lines.read_bytes())
    assert [g["nodes"] for g in from_stdin["groups"]] == [g["nodes"] for g in from_directory["groups"]]


def test_bundles_are_read(fleet_reports, tmp_path):
    env = node_env(tmp_path)
    bundle = tmp_path / "node.tar.gz"
    result = run(["--no-selftest", "bundle", "-o", str(bundle)], env=env, timeout=120)
    if result.returncode not in (0, 1) or not bundle.is_file():
        pytest.fail(f"cudadiag bundle failed\n{describe(result)}")
    _, doc = fleet_json(bundle, fleet_reports["gpu-node01"])
    assert doc["counts"]["nodes"] == 2 and doc["counts"]["input_problems"] == 0
    assert any(node["source"].endswith("(bundle)") for node in doc["nodes"])


def interleave(prefixed: list[list[str]]) -> bytes:
    """Round-robin lines of several nodes' outputs, as srun and kubectl mix them."""
    out = []
    longest = max(map(len, prefixed))
    for i in range(longest):
        for lines in prefixed:
            if i < len(lines):
                out.append(lines[i])
    return ("\n".join(out) + "\n").encode()


def test_srun_label_and_kubectl_prefix_lines_are_demultiplexed(fleet_reports):
    pretty = [p.read_text().splitlines() for p in fleet_reports.values()]  # indent=2, many lines each
    srun = interleave([[f"{task}: {line}" for line in lines] for task, lines in enumerate(pretty)])
    result, doc = fleet_json("-", stdin=srun)
    assert doc["counts"]["nodes"] == 5 and doc["counts"]["input_problems"] == 0, describe(result)
    assert sorted(node["source"] for node in doc["nodes"]) == [f"stdin: task {t}" for t in range(5)]
    kubectl = interleave([[f"[pod/cudadiag-{t:05d}/cudadiag] {line}" for line in lines] for t, lines in enumerate(pretty)])
    _, doc = fleet_json("-", stdin=kubectl)
    assert doc["counts"]["nodes"] == 5 and doc["counts"]["input_problems"] == 0
    assert len(doc["groups"]) == 3


def test_stray_text_and_truncated_reports_are_input_problems(fleet_reports):
    healthy = json.dumps(json.loads(fleet_reports["gpu-node01"].read_text()))
    stream = (f"0: {healthy}\n"
              "1: slurmstepd: error: execve(): cudadiag: No such file or directory\n"
              f"2: {healthy[: len(healthy) // 2]}\n").encode()
    result, doc = fleet_json("-", stdin=stream)
    assert result.returncode == 1
    assert doc["counts"]["nodes"] == 1 and doc["counts"]["input_problems"] == 2, doc["input_problems"]
    messages = {p["source"]: p["message"] for p in doc["input_problems"]}
    assert "No such file or directory" in messages["stdin: task 1"]
    assert "cut off" in messages["stdin: task 2"]
    assert any("not a readable node report" in reason for reason in doc["summary"]["reasons"])


def test_usage_errors_exit_2(tmp_path):
    missing = run(["fleet", str(tmp_path / "nope.json")])
    assert missing.returncode == 2 and b"nope.json" in missing.stderr, describe(missing)
    empty = subprocess.run([str(require_binary()), "fleet", "-"], input=b"", capture_output=True, timeout=30, check=False)
    assert empty.returncode == 2 and b"no cudadiag report" in empty.stderr, describe(empty)
    no_args = run(["fleet"])
    assert no_args.returncode == 2


def test_selftest_figures_per_gpu_model_flag_slow_nodes(fleet_reports, tmp_path):
    base = json.loads(fleet_reports["gpu-node01"].read_text())
    device = {"ordinal": 0, "name": "NVIDIA H200"}
    paths = []
    for index, gbps in enumerate([4000.0, 3990.0, 4010.0, 3000.0]):
        doc = json.loads(json.dumps(base))
        doc["host"]["hostname"] = f"h200-{index}"
        doc["devices"] = [dict(doc["devices"][0], **device)] if doc["devices"] else [device]
        doc["selftest"] = {
            "ran": True, "level": "quick", "status": "pass", "skipped_reason": None,
            "module": {"built": True, "path": None, "reason": None},
            "score": {"value": gbps / 40, "correctness_passed": True, "components": []},
            "tests": [{"key": "reduce", "device": 0, "status": "pass", "reason": None, "wall_ms": 1.0,
                       "description": "", "details": {},
                       "primary": {"name": "f32_gbps", "unit": "GB/s", "value": gbps},
                       "metrics": [{"name": "f32_gbps", "unit": "GB/s", "value": gbps}]}]}
        path = tmp_path / f"h200-{index}.json"
        path.write_text(json.dumps(doc))
        paths.append(path)
    _, doc = fleet_json("--tolerance", "10", *paths)
    spreads = {(s["gpu_model"], s["metric"]): s for s in doc["selftest"]}
    reduce = spreads[("NVIDIA H200", "reduce.f32_gbps")]
    assert reduce["count"] == 4 and reduce["min"] == 3000.0 and reduce["max"] == 4010.0
    assert reduce["median"] == pytest.approx(3995.0)
    assert [o["node"] for o in reduce["outliers"]] == ["h200-3"]
    assert reduce["outliers"][0]["percent_of_median"] == pytest.approx(3000 / 3995 * 100)
    _, loose = fleet_json("--tolerance", "30", *paths)
    assert all(not s["outliers"] for s in loose["selftest"])


def test_html_file(fleet_reports, tmp_path):
    page = tmp_path / "fleet.html"
    result = run(["fleet", "--html", str(page), *map(str, fleet_reports.values())], timeout=60)
    assert result.returncode == 1, describe(result)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "gpu-node04" in html and "590.44.01" in html
    assert "<script" not in html


def test_the_fleet_is_parsed_with_the_fastest_parser_the_build_has(fleet_reports, tmp_path):
    """The `cudadiag` executable parses with nlohmann_json; where the build found simdjson it runs
    cudadiag-fleet in its place (CUDADIAG_EXPECTED_FLEET_PARSER comes from CMake), with the same
    answer. A copy of the executable without cudadiag-fleet beside it parses by itself."""
    expected = os.environ.get("CUDADIAG_EXPECTED_FLEET_PARSER")
    if not expected:
        pytest.skip("CUDADIAG_EXPECTED_FLEET_PARSER is not set (run through ctest)")
    inputs = [str(path) for path in fleet_reports.values()]
    forwarded = run(["-v", "--json", "fleet", *inputs])
    assert f"fleet: reports parsed with {expected}".encode() in forwarded.stderr, describe(forwarded)

    alone = tmp_path / "alone" / "cudadiag"
    alone.parent.mkdir()
    shutil.copy2(require_binary(), alone)
    by_itself = subprocess.run([str(alone), "-v", "--json", "fleet", *inputs], capture_output=True, check=False,
                               stdin=subprocess.DEVNULL, timeout=120)
    assert b"fleet: reports parsed with nlohmann" in by_itself.stderr, describe(by_itself)
    assert by_itself.returncode == forwarded.returncode
    assert json.loads(by_itself.stdout) == json.loads(forwarded.stdout)
