"""Robustness through the real binary: hostile inputs are input errors (exit 2, `cudadiag: error: FILE:`,
never exit 3), stdout survives a reader that goes away, `--json` always prints a JSON document, and
terminal and Markdown output never carry escape sequences that came from a library."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from cudadiag_harness import SOURCE_DIR, clean_env, describe, fake_driver_env, require_binary, run, run_in_pty

ERROR_SCHEMA = SOURCE_DIR / "docs" / "schema" / "error.schema.json"
DEEP = 200_000
#: A device name that would clear the screen, retitle the window and ring the bell.
HOSTILE_NAME = "GPU\x1b]0;pwned\x07\x1b[2J\x1b[31mred\x9b6n\rend"


def error_document(result: subprocess.CompletedProcess, exit_code: int) -> dict:
    import jsonschema

    assert result.returncode == exit_code, describe(result)
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, json.loads(ERROR_SCHEMA.read_text()))
    assert doc["error"]["exit_code"] == exit_code
    assert doc["summary"]["exit_code"] == exit_code
    return doc


def input_error(result: subprocess.CompletedProcess, name: str) -> str:
    """An input error: exit 2 with `cudadiag: error: ` and the file named on stderr."""
    assert result.returncode == 2, describe(result)
    stderr = result.stderr.decode(errors="replace")
    assert "cudadiag: error: " in stderr and name in stderr, describe(result)
    assert "internal error" not in stderr, describe(result)
    return stderr


@pytest.mark.parametrize(
    ("file_name", "content", "expected"),
    [
        ("deep.json", '{"require": ' + "[" * DEEP + "]" * DEEP + "}", "nested deeper than"),
        ("huge.json", '{"require": ["nvrtc"], "fail_on": 1e400}', "number out of range"),
        ("deep.toml", "require = " + "[" * DEEP + "]" * DEEP + "\n", "arrays nested deeper"),
        ("utf8.toml", b'require = ["cccl\xff"]\n', "invalid UTF-8"),
    ],
)
def test_hostile_policy_files_are_input_errors(tmp_path, file_name, content, expected):
    path = tmp_path / file_name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    stderr = input_error(run(["--no-load", "--policy", path], env=clean_env()), str(path))
    assert expected in stderr


def test_hostile_diff_inputs_are_input_errors(tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(run(["--json", "--no-load"], env=clean_env()).stdout)
    huge = tmp_path / "huge.json"
    huge.write_text(good.read_text().replace('"schema_version": 1', '"schema_version": 1e400', 1))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * DEEP + "]" * DEEP)
    assert "number out of range" in input_error(run(["diff", huge, good]), str(huge))
    assert "nested deeper than" in input_error(run(["diff", good, deep]), str(deep))
    doc = error_document(run(["--json", "diff", huge, good]), 2)
    assert "number out of range" in doc["error"]["message"]


def test_a_reader_that_goes_away_ends_the_command_quietly():
    # The read end is closed before cudadiag writes: its write fails with EPIPE (SIGPIPE would kill it).
    for args, codes in ((["--json", "--no-load"], (0, 1)), (["--json", "diff", "/nonexistent-a", "/nonexistent-b"], (2,))):
        process = subprocess.Popen([str(require_binary()), *args], env=clean_env(), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process.stdout.close()
        stderr = process.stderr.read()
        assert process.wait(timeout=30) in codes, (args, process.returncode, stderr)
        assert b"cannot write" not in stderr and b"internal error" not in stderr, stderr
    # The shell pipeline of the issue: head takes one byte and exits.
    shell = subprocess.run(["bash", "-c", f"set -o pipefail; '{require_binary()}' --json --no-load | head -c1"],
                           env=clean_env(), capture_output=True, timeout=30)
    assert shell.returncode in (0, 1), describe(shell)
    assert shell.stdout == b"{"


def test_stdout_that_cannot_be_written_is_an_error():
    with open("/dev/full", "wb") as full:
        result = subprocess.run([str(require_binary()), "--json", "--no-load"], env=clean_env(), stdout=full,
                                stderr=subprocess.PIPE, timeout=30)
    assert result.returncode == 3, result
    assert b"cudadiag: error: cannot write to stdout" in result.stderr


def zombie():
    process = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            return process
        time.sleep(0.01)
    pytest.fail("no zombie")


def test_json_errors_are_json_documents_for_every_subcommand(tmp_path):
    child = zombie()
    try:
        cases = [
            (["--json", "inspect", "--pid", "999999999"], 1, "999999999"),
            (["--json", "inspect", "--pid", str(child.pid)], 1, "zombie"),
            (["--json", "inspect"], 2, "--pid"),
            (["--json", "--no-such-flag"], 2, "no-such-flag"),
            (["--json", "find", "no-such-library"], 2, "unknown component"),
            (["--json", "selftest", "--only", "warp_drive"], 2, "warp_drive"),
            (["--json", "diff", tmp_path / "a.json", tmp_path / "b.json"], 2, "cannot read A"),
            (["--json", "--no-load", "--policy", tmp_path / "missing.toml"], 2, "missing.toml"),
            (["--json", "--no-load", "bundle", "-o", tmp_path / "no" / "dir" / "b.tar.gz"], 2, "b.tar.gz"),
        ]
        for args, code, expected in cases:
            result = run(args, env=clean_env())
            doc = error_document(result, code)
            assert expected in doc["error"]["message"], (args, doc)
            assert doc["error"]["kind"] == {1: "failed", 2: "usage"}[code]
    finally:
        child.wait()


def test_unreadable_process_is_a_json_error_document():
    # As a user who may not read init's memory map.
    result = run(["--json", "inspect", "--pid", "1"], env=clean_env(), user="nobody")
    if result.returncode == 0:
        pytest.skip("pid 1's maps are readable by nobody here")
    assert "/proc/1/maps" in error_document(result, 1)["error"]["message"]


def test_escape_bytes_in_a_device_name_never_reach_the_terminal(tmp_path):
    env = fake_driver_env(tmp_path / "driver")
    env["CUDADIAG_FAKE_CUDA_NAME"] = HOSTILE_NAME
    markdown = tmp_path / "report.md"
    result = run(["--no-selftest", "--markdown", markdown], env=env)
    assert result.returncode in (0, 1), describe(result)
    for output in (result.stdout, markdown.read_bytes()):
        for raw in (b"\x1b", b"\x07", b"\r", "\x9b".encode()):
            assert raw not in output, (raw, output[:2000])
    assert b"GPU\\x1b]0;pwned\\x07\\x1b[2J" in result.stdout, result.stdout[:3000]
    assert b"\\u009b6n\\x0dend" in result.stdout
    # JSON keeps the name as data (escaped by JSON itself).
    doc = json.loads(run(["--json", "--no-selftest"], env=env).stdout)
    assert any(device.get("name") == HOSTILE_NAME for device in doc["devices"]), doc["devices"]
    # On a terminal the colours stay, the hostile sequences do not.
    code, output = run_in_pty(["--no-selftest"], env=env)
    assert code in (0, 1)
    assert b"\x1b[1m" in output  # cudadiag's own bold
    for raw in (b"\x1b]0;", b"\x07", b"\x1b[2J"):
        assert raw not in output, output[:2000]


def test_log_messages_on_stderr_escape_control_characters(tmp_path):
    # A file name is outside input too: it reaches stderr in the error message.
    path = tmp_path / "gate\x1b]0;pwned\x07\x1b[2J.json"
    path.write_text('{"require": 1e400}')
    result = run(["--no-load", "--policy", path], env=clean_env())
    assert result.returncode == 2, describe(result)
    assert b"\x1b]0;" not in result.stderr and b"\x07" not in result.stderr, result.stderr
    assert b"gate\\x1b]0;pwned\\x07\\x1b[2J.json" in result.stderr, result.stderr
