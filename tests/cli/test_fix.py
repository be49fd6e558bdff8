"""`cudadiag fix`: the best plan of each warning and error as a commented shell script, never run;
`--json` for tools (docs/schema/fix.schema.json). Exit 0 nothing to fix, 1 a plan was printed,
2 usage. Following the printed script (sourced by sh, as the manual says) clears the findings it
names. The corpus-wide proof that each plan works is tests/scenarios/test_fix_simulation.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema

from cudadiag_harness import SOURCE_DIR, require_binary, run

FIX_SCHEMA = json.loads((SOURCE_DIR / "docs" / "schema" / "fix.schema.json").read_text())


def base_env(tmp_path: Path) -> dict:
    (tmp_path / "home").mkdir(exist_ok=True)
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}


def finding_ids(report: bytes) -> list[str]:
    return [f["id"] for f in json.loads(report)["findings"]]


def test_fix_prints_a_script_that_clears_bad_search_path_entries(tmp_path):
    env = base_env(tmp_path)
    env["LD_LIBRARY_PATH"] = f"{tmp_path}/missing::/usr/lib"
    done = run(["fix", "--no-load"], env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    script = done.stdout.decode()
    assert script.startswith("#!/bin/sh\n")
    assert "Nothing here has been run" in script
    assert "# env.bad_search_path (warning): LD_LIBRARY_PATH has 2 bad entries" in script
    assert "[as the user; touches this user's shell or job]" in script
    # Following it: the script sourced, then the report again in that shell.
    (tmp_path / "fix.sh").write_text(script)
    after = subprocess.run(["sh", "-c", f'. ./fix.sh && exec "{require_binary()}" --json --no-load'], env=env,
                           cwd=tmp_path, capture_output=True, timeout=60, check=False)
    assert "env.bad_search_path" not in finding_ids(after.stdout), after.stdout[-2000:]


def test_fix_json_is_schema_valid_and_names_the_plan(tmp_path):
    env = base_env(tmp_path)
    env["LD_LIBRARY_PATH"] = f"{tmp_path}/missing"
    done = run(["fix", "--no-load", "--json"], env=env, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    jsonschema.validate(document, FIX_SCHEMA)
    planned = {entry["id"]: entry["plan"] for entry in document["planned"]}
    action = planned["env.bad_search_path"]["actions"][0]
    assert action["action"] == "remove_path_entry"
    assert (action["variable"], action["value"]) == ("LD_LIBRARY_PATH", f"{tmp_path}/missing")
    assert planned["env.bad_search_path"]["scope"] == "user"
    assert document["script"].startswith("#!/bin/sh\n")


def test_driver_install_is_printed_as_a_comment_and_says_it_is_not_simulable(tmp_path):
    """No driver reachable through an empty loader cache: driver.missing's plan installs the driver,
    which cudadiag neither runs nor simulates."""
    env = base_env(tmp_path)
    cache = tmp_path / "ld.so.cache"
    cache.write_bytes(b"glibc-ld.so.cache1.1" + bytes(28))
    done = run(["fix", "--no-load", "--json", "--ld-so-cache", str(cache)], env=env, cwd=tmp_path)
    document = json.loads(done.stdout)
    jsonschema.validate(document, FIX_SCHEMA)
    plan = next(entry["plan"] for entry in document["planned"] if entry["id"] == "driver.missing")
    assert (plan["runs_as"], plan["scope"], plan["simulable"]) == ("root", "host", False)
    assert plan["actions"][0]["shell"].startswith("# install or upgrade the NVIDIA driver")


def test_nothing_to_fix_exits_0(tmp_path):
    """A report whose findings are all info (or none): exit 0 and a script saying so."""
    env = base_env(tmp_path)
    report = run(["--json", "--no-load"], env=env, cwd=tmp_path)
    planned_worse = [f for f in json.loads(report.stdout)["findings"]
                     if f["severity"] != "info" and f["fix"]]
    done = run(["fix", "--no-load"], env=env, cwd=tmp_path)
    if planned_worse:
        assert done.returncode == 1
    else:
        assert done.returncode == 0, done.stdout.decode()
        assert "nothing to fix" in done.stdout.decode()


def test_fix_usage_error_exits_2(tmp_path):
    done = run(["fix", "--no-such-option"], env=base_env(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == b""
