"""The terminal experience through a real pseudo-terminal: every line of real reports fits 80, 120
and 200 columns (the width cudadiag reads from the terminal itself, TIOCGWINSZ) except a whole path
on a line of its own, tables stay aligned, paths are never broken across lines and are shortened
only at their start where the whole path is in --full and --json (never in `find`), the healthy
report fits one screen, colour follows no-color.org, TERM=dumb and --color."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import unicodedata
from pathlib import Path

import pytest

from cudadiag_harness import SYSTEM_CTK, clean_env, parse_report, require_binary, run

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or Path(__file__).resolve().parents[2] / "build" / "tests" / "fixtures")
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
WIDTHS = (80, 120, 200)


def display_width(line: str) -> int:
    """Columns a terminal gives `line`: escape sequences none, combining marks none, wide characters two."""
    width = 0
    for char in ANSI.sub("", line):
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def in_pty(args, columns: int, env: dict, timeout: float = 120) -> tuple[int, str, str]:
    """Runs cudadiag with stdout on a pty of `columns` x 50 (stderr on a pipe); (code, stdout, stderr)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    process = subprocess.Popen([str(require_binary()), *args], env=env, stdin=subprocess.DEVNULL,
                               stdout=slave, stderr=subprocess.PIPE, close_fds=True)
    os.close(slave)
    output = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                process.kill()
                pytest.fail(f"cudadiag {args} did not finish within {timeout}s on a pty")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
    finally:
        os.close(master)
    stderr = process.stderr.read().decode(errors="replace")
    code = process.wait(timeout=timeout)
    return code, output.decode("utf-8").replace("\r\n", "\n"), stderr


def whole_path_line(line: str) -> bool:
    """A line that holds one whole path and nothing else (the only line allowed past the width),
    in brackets or followed by punctuation at most."""
    words = ANSI.sub("", line).split()
    if len(words) != 1 or "…" in words[0]:
        return False
    word = words[0].strip("()[],;:.")
    # A variable's value, as a finding quotes it (CUDA_PATH=/x/y), is that path too.
    word = re.sub(r"^[A-Za-z_][A-Za-z0-9_]*=", "", word)
    return word.startswith("/")


def check_paths(text: str, what: str) -> None:
    """Paths are shortened only at their start ("…/lib/x") and never broken across lines."""
    plain = ANSI.sub("", text)
    inner = [line for line in plain.splitlines() if re.search(r"[^\s(]…/|/…", line)]
    assert not inner, f"{what}: a path shortened elsewhere than at its start:\n" + "\n".join(inner)
    broken = [line for line in plain.splitlines() if re.search(r"/[\w.+-]*/$", line.rstrip())]
    assert not broken, f"{what}: a path broken at the end of a line:\n" + "\n".join(broken)


def check_fits(text: str, columns: int, what: str) -> None:
    lines = text.splitlines()
    assert len(lines) >= 3, f"{what}: too little output:\n{text}"
    check_paths(text, what)
    too_wide = [(display_width(line), line) for line in lines
                if display_width(line) > columns and not whole_path_line(line)]
    assert not too_wide, f"{what} at {columns} columns: {len(too_wide)} lines too wide:\n" + "\n".join(
        f"{w:4d} {line}" for w, line in too_wide)
    # Tables are sized to their content: no line carries a run of 20 spaces between two words.
    gaps = [line for line in lines if re.search(r"\S {20,}\S", ANSI.sub("", line))]
    assert not gaps, f"{what} at {columns} columns: wide gaps in\n" + "\n".join(gaps)


def check_table_aligned(text: str, header_start: str) -> None:
    """The rows under a header line start their columns where the header's columns start."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.lstrip().startswith(header_start)), None)
    assert header is not None, f"no table headed {header_start!r}:\n{text}"
    starts = [m.start() for m in re.finditer(r"(?<=  )\S", lines[header])]  # columns are 2+ spaces apart
    starts = [len(lines[header]) - len(lines[header].lstrip())] + starts
    rows = 0
    for line in lines[header + 1:]:
        if not line.strip():
            break
        if len(line) - len(line.lstrip()) > starts[0]:
            continue  # a note or a path on its own line, indented under its row
        if not re.search(r"\S {2,}\S", line.strip()):
            continue  # a first cell too long for its column, alone on the line above its row
        rows += 1
        for start in starts[1:]:
            if len(line) > start:
                assert line[start - 1] == " ", f"column at {start} misaligned in {line!r} (header {lines[header]!r})"
    assert rows, f"no rows under {header_start!r}"


def fake_driver_env(**extra) -> dict:
    driver = FIXTURES / "fake-driver"
    nvml = FIXTURES / "fake-nvml"
    if not (driver / "libcuda.so.1").exists():
        pytest.skip(f"fixture not built: {driver}")
    # A healthy machine: the driver and the toolkit on the loader's path whether or not this
    # machine's ld.so.cache lists the toolkit (NVRTC must find its builtins by name).
    env = clean_env(LD_LIBRARY_PATH=f"{driver}:{nvml}:{SYSTEM_CTK / 'lib64'}", CUDA_HOME=str(SYSTEM_CTK),
                    CUDADIAG_FAKE_CUDA="ok", TERM="xterm-256color", **extra)
    env.pop("COLUMNS", None)
    return env


def broken_env(tmp_path: Path) -> dict:
    """No driver, and a stub libcuda first on LD_LIBRARY_PATH: a report with error findings."""
    stubs = SYSTEM_CTK / "lib64" / "stubs"
    if not (stubs / "libcuda.so").exists():
        pytest.skip(f"no toolkit stub libcuda at {stubs}")
    stub_dir = tmp_path / "a-rather-long-directory-name-that-a-user-might-have" / "deeper" / "still" / "lib"
    stub_dir.mkdir(parents=True)
    (stub_dir / "libcuda.so.1").symlink_to(stubs / "libcuda.so")
    env = clean_env(LD_LIBRARY_PATH=str(stub_dir), CUDA_HOME=str(SYSTEM_CTK), CUDA_PATH=str(tmp_path / "nope"),
                    TERM="xterm-256color")
    env.pop("COLUMNS", None)
    return env


FAMILIES = ("driver", "runtime", "math libs", "cuDNN/NCCL", "binaries")


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_healthy_report_fits_the_terminal(columns):
    code, out, err = in_pty(["--no-selftest"], columns, fake_driver_env())
    assert code == 0, out + err
    check_fits(out, columns, "healthy report")
    plain = ANSI.sub("", out)
    # One screen: the verdict, the stack one line per family, the GPU, Python, the notes.
    if columns in (80, 120):
        assert len(plain.splitlines()) <= 40, f"{len(plain.splitlines())} lines at {columns} columns:\n{plain}"
    stack = plain[plain.index("\nStack"):]
    for family in FAMILIES:
        assert re.search(rf"\n  {re.escape(family)} (\(\d+\)  |  +none found)", stack), (family, stack)
    assert "What to do first" not in plain, plain  # healthy: nothing to do
    # Healthy: no warning or error. Notes (a library that neither search finds, as a toolkit off the
    # loader's path may leave) are one line per id, however many components repeat it.
    findings = parse_report(run(["--json", "--no-selftest"], env=fake_driver_env())).get("findings")
    assert all(f["severity"] == "info" for f in findings), findings
    if findings:
        notes = plain[plain.index("\nNotes"):]
        assert all(f["id"] in notes for f in findings), (findings, notes)
        for finding_id in {f["id"] for f in findings}:
            assert notes.count(finding_id) == 1, (finding_id, notes)


@pytest.mark.parametrize("columns", (80, 120))
def test_the_full_report_has_every_component_with_its_whole_path(columns):
    code, out, err = in_pty(["--full", "--no-selftest"], columns, fake_driver_env())
    assert code == 0, out + err
    check_fits(out, columns, "full report")
    plain = ANSI.sub("", out)
    check_table_aligned(plain, "NAME")
    assert "…" not in plain[plain.index("\nComponents"):plain.index("\nLoaded")], "whole paths in --full"
    # Components that were not found are named on one wrapped line under the table, not a row each.
    assert re.search(r"\n  not found \(\d+\): \w", plain), plain
    doc = parse_report(run(["--json", "--no-selftest"], env=fake_driver_env()))
    for component in doc["components"]:
        if component["selected"]:
            assert component["selected"]["path"] in plain, component["selected"]["path"]


@pytest.mark.parametrize("columns", WIDTHS)
def test_a_report_with_errors_fits_the_terminal(columns, tmp_path):
    env = broken_env(tmp_path)
    code, out, err = in_pty(["--no-selftest"], columns, env)
    assert code == 1, out + err
    check_fits(out, columns, "report with errors")
    plain = ANSI.sub("", out)
    # What to do first comes first: the errors, each cause with its remedy, in the first 20 lines.
    head = "\n".join(plain.splitlines()[:20])
    assert "What to do first" in head and "ERROR" in head and "remedy:" in head, head
    # Findings wrap with a hanging indent: no finding text starts at column 0.
    problems = plain[plain.index("\nWhat to do first"):plain.index("\nStack")].splitlines()[2:]
    assert all(line.startswith("  ") for line in problems if line), problems
    # The long stub path: whole in the finding (on a line of its own where it does not fit) and in
    # --json; where the stack shortens it, only at its start.
    doc = run(["--json", "--no-selftest"], env=env).stdout.decode()
    stub_dir = str(tmp_path / "a-rather-long-directory-name-that-a-user-might-have" / "deeper" / "still" / "lib")
    assert stub_dir in doc
    assert stub_dir in plain, plain
    for shortened in re.findall(r"…(/\S+)", plain):
        assert shortened.rstrip(")") in doc or shortened.split(" ")[0] in doc, shortened


PUBLIC_LOG = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "kernel-log" / "public-reports.log"


@pytest.mark.parametrize("columns", WIDTHS)
def test_repair_classes_sit_under_their_remedies_and_an_unreadable_kernel_log_says_so(columns, tmp_path):
    # Xid events of public reports (a saved log): findings of every class but the environment's.
    env = clean_env(TERM="xterm-256color", CUDADIAG_KMSG=str(PUBLIC_LOG))
    env.pop("COLUMNS", None)
    for args, what in ((["--no-load"], "summary"), (["--no-load", "--full"], "full report")):
        code, out, err = in_pty(args, columns, env)
        assert code == 1, out + err
        check_fits(out, columns, f"{what} with Xid findings")
        plain = ANSI.sub("", out)
        lines = plain.splitlines()
        # "    repair: CLASS" right under its remedy (the remedy's label column, its text's column),
        # never for none.
        repairs = [i for i, line in enumerate(lines) if line.startswith("    repair: ")]
        assert repairs, plain
        for i in repairs:
            assert re.fullmatch(r"    repair: [a-z_]+", lines[i]), lines[i]
            above = i - 1
            while lines[above].startswith(" " * 12):  # the remedy's continuation lines
                above -= 1
            assert lines[above].startswith("    remedy: "), (lines[above], lines[i])
        shown = {line.split()[-1] for line in (lines[i] for i in repairs)}
        assert {"restart_process", "reset_gpu", "reboot", "hardware_inspection"} <= shown, shown
        assert "repair: none" not in plain and "(repair: none" not in plain
        if what == "summary":
            assert "Kernel log" not in plain  # read: its findings speak for it
        else:
            assert re.search(r"\nKernel log  .*\s+13\s+Xid/SXid\s+event\s+line\(s\)", plain, re.DOTALL), plain

    absent = clean_env(TERM="xterm-256color", CUDADIAG_KMSG=str(tmp_path / "absent"))
    absent.pop("COLUMNS", None)
    code, out, err = in_pty(["--no-load"], columns, absent)
    assert code in (0, 1), out + err
    check_fits(out, columns, "summary with an unreadable kernel log")
    plain = " ".join(ANSI.sub("", out).split())
    assert "Kernel log " in plain and "absent: unreadable: No such file or directory; Xid and SXid events not checked" \
        in plain, plain


@pytest.mark.parametrize("columns", WIDTHS)
def test_find_explain_of_a_miss_fits_the_terminal(columns, tmp_path):
    empty_cache = tmp_path / "ld.so.cache"
    empty_cache.write_bytes(b"")
    env = clean_env(TERM="xterm-256color", CUDA_HOME=str(tmp_path / "no-such-toolkit-here"),
                    LD_LIBRARY_PATH=f"{tmp_path}/lib-a-long-enough-name-to-need-wrapping-at-eighty-columns-xxxxxxxx")
    env.pop("COLUMNS", None)
    code, out, err = in_pty(["--ld-so-cache", str(empty_cache), "find", "nvml", "--explain"], columns, env)
    assert code == 1, out + err
    check_fits(out, columns, "find --explain nvml")


@pytest.mark.parametrize("columns", WIDTHS)
def test_selftest_fits_the_terminal(columns):
    env = clean_env(TERM="xterm-256color", CUDA_HOME=str(SYSTEM_CTK))
    env.pop("COLUMNS", None)
    code, out, err = in_pty(["selftest"], columns, env, timeout=300)
    assert code in (0, 1), out + err
    check_fits(out, columns, "selftest")


def test_width_is_80_on_a_pipe_and_follows_columns_and_width():
    env = fake_driver_env()
    piped = run(["--no-selftest"], env=env).stdout.decode()
    assert max(display_width(line) for line in piped.splitlines()) <= 80
    wide = run(["--no-selftest"], env=dict(env, COLUMNS="200")).stdout.decode()
    assert max(display_width(line) for line in wide.splitlines()) > 80, "COLUMNS=200 was not used"
    narrow = run(["--no-selftest", "--width", "60"], env=dict(env, COLUMNS="200")).stdout.decode()
    assert max(display_width(line) for line in narrow.splitlines()) <= 60, "--width beats COLUMNS"
    bad = run(["--width", "5"], env=env)
    assert bad.returncode == 2


def test_find_prints_the_whole_path_however_narrow():
    env = fake_driver_env(COLUMNS="20")
    path = run(["find", "nvrtc", "--width", "20"], env=env).stdout.decode().strip()
    assert "…" not in path and Path(path).exists(), path


@pytest.mark.parametrize("setting,coloured", [
    ({}, True),
    ({"NO_COLOR": ""}, True),  # no-color.org: only a non-empty value turns colour off
    ({"NO_COLOR": "1"}, False),
    ({"TERM": "dumb"}, False),
])
def test_colour_follows_no_color_org_and_term(setting, coloured):
    env = dict(fake_driver_env(), **setting)
    code, out, _ = in_pty(["--no-selftest"], 80, env)
    assert code == 0
    assert bool(ANSI.search(out)) == coloured, f"{setting}: colour {'missing' if coloured else 'present'}"


@pytest.mark.parametrize("flag,coloured", [("always", True), ("never", False), ("auto", False)])
def test_color_flag_on_a_pipe(flag, coloured):
    result = run(["--no-selftest", "--color", flag], env=fake_driver_env())
    assert result.returncode == 0
    assert (b"\x1b[" in result.stdout) == coloured
    assert run(["--color", "sometimes"], env=fake_driver_env()).returncode == 2


# ---------------------------------------------------------------------------------------------
# Logs and progress on stderr
# ---------------------------------------------------------------------------------------------


def stderr_in_pty(args, env: dict, timeout: float = 300) -> tuple[int, bytes, str]:
    """Runs cudadiag with stderr on an 80-column pty and stdout on a pipe; (code, stdout, stderr)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 80, 0, 0))
    process = subprocess.Popen([str(require_binary()), *args], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=slave, close_fds=True)
    os.close(slave)
    err = bytearray()
    out = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master, process.stdout], [], [], timeout)
            if not ready:
                process.kill()
                pytest.fail(f"cudadiag {args} did not finish within {timeout}s")
            if process.stdout in ready:
                chunk = os.read(process.stdout.fileno(), 65536)
                out += chunk
            if master in ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
    finally:
        os.close(master)
    out += process.stdout.read()
    return process.wait(timeout=timeout), bytes(out), err.decode(errors="replace")


def test_v_logs_each_stage_with_its_duration():
    result = run(["-v", "--no-selftest"], env=fake_driver_env())
    stderr = result.stderr.decode()
    for stage in ("environment", "discovery of the verified components", "verification and the rest of the discovery",
                  "findings"):
        assert re.search(rf"^cudadiag: info: {re.escape(stage)}: [0-9.]+ ms", stderr, re.MULTILINE), (stage, stderr)
    assert "examined" not in stderr and "worker cuda:" not in stderr, "-v shows stages only"


def test_vv_logs_search_steps_and_worker_messages_and_trace_every_file():
    stderr = run(["-vv", "--no-selftest"], env=fake_driver_env()).stderr.decode()
    assert re.search(r"^cudadiag: debug: nvml: LD_LIBRARY_PATH: .*libnvidia-ml\.so\.1 exists", stderr, re.MULTILINE), stderr
    assert re.search(r"^cudadiag: debug: nvml: conda: not searched", stderr, re.MULTILINE), stderr
    assert re.search(r"^cudadiag: debug: worker cuda: ok in [0-9]+ ms, last phase ", stderr, re.MULTILINE), stderr
    assert "examined" not in stderr
    traced = run(["--log-level", "trace", "--no-selftest"], env=fake_driver_env()).stderr.decode()
    assert re.search(r"^cudadiag: trace: cuda: examined .*libcuda\.so\.1: realpath .*; ELF SONAME libcuda\.so\.1",
                     traced, re.MULTILINE), traced


def test_a_live_progress_line_on_a_terminal_and_none_with_json():
    env = clean_env(TERM="xterm-256color", CUDA_HOME=str(SYSTEM_CTK))
    env.pop("CI", None)
    code, out, err = stderr_in_pty(["selftest", "--only", "jit"], env)
    assert code in (0, 1), err
    assert "\r\x1b[Kcudadiag: self-test: running jit" in err, repr(err)
    assert "self-test:" not in err.rsplit("\r\x1b[K", 1)[1], f"the line is cleared at the end: {err!r}"
    assert b"\x1b" not in out, "stdout (a pipe) carries no escape sequence"
    code, out, err = stderr_in_pty(["selftest", "--only", "jit", "--json"], env)
    assert "self-test: running" not in err, repr(err)


@pytest.mark.parametrize("columns", WIDTHS)
def test_diff_fleet_and_inspect_text_fit_the_width(columns, tmp_path):
    h200 = Path(__file__).resolve().parents[2] / "docs" / "examples" / "h200-host-report.json"
    here = tmp_path / "here.json"
    here.write_bytes(run(["--json", "--no-selftest"], env=fake_driver_env()).stdout)
    env = dict(fake_driver_env(), COLUMNS=str(columns))
    for args in (["diff", str(h200), str(here)], ["fleet", str(h200), str(here)], ["inspect", "--pid", str(os.getpid())]):
        result = run(args, env=env)
        assert result.returncode in (0, 1), (args, result.stderr)
        text = result.stdout.decode()
        too_wide = [line for line in text.splitlines() if display_width(line) > columns and not whole_path_line(line)]
        assert not too_wide, f"{args} at {columns}: " + "\n".join(too_wide)
        check_paths(text, " ".join(args))
