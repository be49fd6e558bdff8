"""Fault injection: the real `cudadiag --json` against hostile driver stand-ins (tests/fixtures/
fake_libcuda.c modes) that crash, hang, fork daemons, flood and lie on the worker protocol, report
a thousand devices or hostile names. Each run must finish within its deadline with one valid JSON
report and a documented exit code, leave no process behind (every process the run started carries
a marker in its environment and is looked for afterwards) and keep the parent's memory bounded."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cudadiag_harness import FIXTURES, describe, fake_driver_env, parse_report, require_binary

# (mode, extra environment, arguments, the wall-clock bound in seconds)
CASES = [
    ("crash", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("hang", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("crash-on-load", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("hang-on-load", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("fork-and-hang", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("fork-and-return", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("daemon", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("noisy", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("protocol-deep", {}, ["--no-selftest", "--timeout", "5"], 15),
    ("protocol-deadline", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("protocol-flood", {}, ["--no-selftest", "--timeout", "5"], 15),
    # A driver that takes all the memory it can: the worker's RLIMIT_DATA stops it (cuInit then
    # says out of memory) long before the machine's memory; the parent is untouched.
    ("hog", {"CUDADIAG_WORKER_MEMORY_MB": "256"}, ["--no-selftest", "--timeout", "5"], 15),
    ("ok", {"CUDADIAG_FAKE_CUDA_DEVICES": "1000", "CUDADIAG_SELFTEST_BUDGET_S": "5"}, ["--timeout", "5"], 60),
    ("ok", {"CUDADIAG_FAKE_CUDA_NAME": "H200 \x1b]0;owned\x07\x1b[2J\x1b[31mred"}, ["--no-selftest"], 15),
]
PARENT_RSS_LIMIT_KIB = 512 * 1024


def marked_processes(marker: str) -> list[int]:
    """Processes whose environment holds CUDADIAG_TEST_MARKER=<marker> (only this user's are readable)."""
    needle = f"CUDADIAG_TEST_MARKER={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("mode,extra,args,bound", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_hostile_driver_cannot_break_the_report(mode, extra, args, bound, tmp_path):
    marker = uuid.uuid4().hex
    env = fake_driver_env(tmp_path / "driver")
    env.update({"CUDADIAG_FAKE_CUDA": mode, "CUDADIAG_TEST_MARKER": marker, **extra})
    start = time.monotonic()
    # Through a small Python parent, so that the rusage of children is this run's alone.
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)\n"
        "sys.stdout.buffer.write(done.stdout)\n"
        "sys.stderr.buffer.write(done.stderr)\n"
        "sys.stderr.write('\\nMAXRSS_KIB=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(done.returncode)\n")
    result = subprocess.run([sys.executable, "-c", probe, str(require_binary()), "--json", *args], env=env,
                            capture_output=True, timeout=bound + 60, check=False)
    wall = time.monotonic() - start
    assert wall < bound, f"{mode}: took {wall:.1f} s (bound {bound} s)\n{describe(result)}"
    assert result.returncode in (0, 1), describe(result)
    doc = parse_report(result)  # one JSON document, valid against the schema, exit code consistent
    assert doc["summary"]["exit_code"] == result.returncode
    rss = [line for line in result.stderr.decode(errors="replace").splitlines() if line.startswith("MAXRSS_KIB=")]
    assert rss and int(rss[-1].split("=")[1]) < PARENT_RSS_LIMIT_KIB, f"{mode}: {rss}"
    # The driver's worker may take a moment to be reaped by the kernel after SIGKILL.
    deadline = time.monotonic() + 3
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not marked_processes(marker), f"{mode}: processes left behind: {marked_processes(marker)}"
    if extra.get("CUDADIAG_FAKE_CUDA_DEVICES") == "1000":
        selftest = doc["selftest"]
        assert selftest["max_workers"] <= max(1, (os.cpu_count() or 2) // 2), selftest["max_workers"]
        late = [t for t in selftest["tests"] if "overall budget" in (t["reason"] or "")]
        assert late and all(t["status"] == "skip" for t in late), "the budget cut no device"
    if mode == "hog":
        driver = next(s for s in doc["verification"]["steps"] if s["kind"] == "driver")
        assert driver["result"]["init"]["code"] == 2, driver  # CUDA_ERROR_OUT_OF_MEMORY: malloc failed
    text = result.stdout.decode(errors="replace")
    assert "\x1b" not in text and "\x07" not in text, f"{mode}: raw terminal escapes in the JSON"


# ---------------------------------------------------------------------------------------------
# Output targets (docs/manual.md, "Output files"): every output option writes through a device, a
# FIFO or a descriptor link and never replaces it; a regular file is replaced atomically with its
# mode kept; stdout named while --json writes it is a usage error. Device nodes are made with mknod
# in the test's own directory (never the machine's /dev); as root and as the nobody user.
# ---------------------------------------------------------------------------------------------

REPORT_OUTPUTS = ("--junit", "--html", "--markdown", "--prometheus")
NOBODY = 65534


def _nobody_can_run() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        probe = subprocess.run([str(require_binary()), "--version"], capture_output=True, user=NOBODY,
                               check=False, timeout=30)
    except PermissionError:
        return False
    return probe.returncode == 0


USERS = [pytest.param(None, id="as-invoking-user"), pytest.param(NOBODY, id="as-nobody")]


def _open_world(prefix: str) -> Path:
    """A temporary directory every user may enter and write (the nobody runs write in it)."""
    import tempfile

    world = Path(tempfile.mkdtemp(prefix=prefix))
    world.chmod(0o777)
    return world


def _as_user(user):
    if user is None:
        return None
    if not _nobody_can_run():
        pytest.skip("needs root, and a cudadiag binary the nobody user may execute")
    return user


def _mknod_or_skip(path: Path, kind: int, major: int, minor: int) -> Path:
    try:
        os.mknod(path, kind | 0o666, os.makedev(major, minor))
    except PermissionError as error:
        pytest.skip(f"mknod is not permitted here: {error}")
    path.chmod(0o666)
    return path


def _run_outputs(args, user, cwd):
    from cudadiag_harness import clean_env, run

    return run([*args, "--no-load"], env=clean_env(), cwd=cwd, user=user)


@pytest.mark.parametrize("user", USERS)
def test_a_character_device_is_written_through_never_replaced(user):
    import shutil
    import stat

    user = _as_user(user)
    world = _open_world("cudadiag-out-dev-")
    try:
        nodes = {flag: _mknod_or_skip(world / f"null{flag}", stat.S_IFCHR, 1, 3) for flag in REPORT_OUTPUTS}
        bundle_node = _mknod_or_skip(world / "null-bundle", stat.S_IFCHR, 1, 3)
        args = [arg for flag, node in nodes.items() for arg in (flag, str(node))]
        result = _run_outputs(args, user, world)
        assert result.returncode in (0, 1), describe(result)
        bundle = _run_outputs(["bundle", "-o", str(bundle_node)], user, world)
        assert bundle.returncode in (0, 1), describe(bundle)
        for node in [*nodes.values(), bundle_node]:
            info = os.lstat(node)
            assert stat.S_ISCHR(info.st_mode), f"{node} is no longer a character device"
            assert os.major(info.st_rdev) == 1 and os.minor(info.st_rdev) == 3
            assert stat.S_IMODE(info.st_mode) == 0o666, oct(info.st_mode)
        assert sorted(p.name for p in world.iterdir()) == sorted(n.name for n in [*nodes.values(), bundle_node]), \
            "a temporary file was left behind"
    finally:
        shutil.rmtree(world)


@pytest.mark.parametrize("user", USERS)
def test_a_full_device_is_an_error_naming_it_and_stays_a_device(user):
    import shutil
    import stat

    user = _as_user(user)
    world = _open_world("cudadiag-out-full-")
    try:
        full = _mknod_or_skip(world / "full", stat.S_IFCHR, 1, 7)
        result = _run_outputs(["--junit", str(full)], user, world)
        assert result.returncode == 2, describe(result)
        assert f"cannot write {full}: No space left on device" in result.stderr.decode(), describe(result)
        assert stat.S_ISCHR(os.lstat(full).st_mode)
        bundle = _run_outputs(["bundle", "-o", str(full)], user, world)
        assert bundle.returncode != 0 and "No space left on device" in bundle.stderr.decode(), describe(bundle)
        assert stat.S_ISCHR(os.lstat(full).st_mode)
    finally:
        shutil.rmtree(world)


def test_a_block_device_is_refused_without_being_opened(tmp_path):
    import stat

    block = _mknod_or_skip(tmp_path / "loop0", stat.S_IFBLK, 7, 0)
    result = _run_outputs(["--html", str(block)], None, tmp_path)
    assert result.returncode == 2, describe(result)
    assert f"cannot write {block}: it is a block device" in result.stderr.decode(), describe(result)
    assert stat.S_ISBLK(os.lstat(block).st_mode)


@pytest.mark.parametrize("user", USERS)
def test_a_fifo_reader_gets_every_output_and_the_fifo_stays(user):
    import shutil
    import stat
    import threading

    user = _as_user(user)
    world = _open_world("cudadiag-out-fifo-")
    try:
        fifos = {}
        for name in (*REPORT_OUTPUTS, "bundle", "fleet"):
            fifos[name] = world / f"pipe{name}"
            os.mkfifo(fifos[name], 0o666)
            fifos[name].chmod(0o666)
        received: dict[str, bytes] = {}

        def read_all(name):
            with open(fifos[name], "rb") as pipe:
                received[name] = pipe.read()

        readers = [threading.Thread(target=read_all, args=(name,), daemon=True) for name in fifos]
        for reader in readers:
            reader.start()
        args = [arg for flag in REPORT_OUTPUTS for arg in (flag, str(fifos[flag]))]
        result = _run_outputs(args, user, world)
        assert result.returncode in (0, 1), describe(result)
        bundle = _run_outputs(["bundle", "-o", str(fifos["bundle"])], user, world)
        assert bundle.returncode in (0, 1), describe(bundle)
        report = world / "report.json"
        report_run = _run_outputs(["--json"], None, world)
        report.write_bytes(report_run.stdout)
        fleet = _run_outputs(["fleet", str(report), "--html", str(fifos["fleet"])], user, world)
        assert fleet.returncode in (0, 1), describe(fleet)
        for reader in readers:
            reader.join(timeout=30)
        assert received["--junit"].startswith(b"<?xml"), received["--junit"][:80]
        assert b"<html" in received["--html"][:400].lower()
        assert received["--markdown"].startswith(b"#"), received["--markdown"][:80]
        assert b"cudadiag_up" in received["--prometheus"]
        assert received["bundle"][:2] == b"\x1f\x8b", "the bundle is a gzip stream"
        assert b"<html" in received["fleet"][:400].lower()
        for path in fifos.values():
            assert stat.S_ISFIFO(os.lstat(path).st_mode), f"{path} is no longer a FIFO"
    finally:
        shutil.rmtree(world)


def test_a_link_to_standard_output_prints_there_and_stays_a_link(tmp_path):
    link = tmp_path / "mystdout"
    link.symlink_to("/proc/self/fd/1")
    result = _run_outputs(["--markdown", str(link)], None, tmp_path)
    assert result.returncode in (0, 1), describe(result)
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    out = result.stdout.decode()
    assert "\n# " in "\n" + out and "cudadiag" in out, "the Markdown report did not reach stdout"


@pytest.mark.parametrize("target", ["/dev/stdout", "/proc/self/fd/1", "link", "redirect"])
def test_an_output_on_standard_output_with_json_is_a_usage_error(tmp_path, target):
    from cudadiag_harness import clean_env

    if target == "link":
        link = tmp_path / "mystdout"
        link.symlink_to("/dev/stdout")
        target = str(link)
    stdout_file = tmp_path / "out.json"
    if target == "redirect":
        target = str(stdout_file)  # the very file stdout is redirected to
    with open(stdout_file, "wb") as out:
        result = subprocess.run([str(require_binary()), "--json", "--no-load", "--junit", target], env=clean_env(),
                                cwd=tmp_path, stdout=out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                timeout=120, check=False)
    assert result.returncode == 2, result.stderr.decode()
    assert "is standard output, which --json writes" in result.stderr.decode()
    # stdout still carries one JSON document: the error's, nothing of the report or the JUnit file.
    import json

    document = json.loads(stdout_file.read_bytes())
    assert document["error"]["exit_code"] == 2 and "is standard output" in document["error"]["message"], document


@pytest.mark.parametrize("user", USERS)
def test_a_regular_file_is_replaced_atomically_its_link_and_mode_kept(user):
    import shutil
    import stat

    user = _as_user(user)
    world = _open_world("cudadiag-out-file-")
    try:
        real_dir = world / "artifacts"
        real_dir.mkdir()
        real_dir.chmod(0o777)
        target = real_dir / "junit.xml"
        target.write_text("old")
        target.chmod(0o640)
        if user is not None:
            os.chown(target, user, user)
        link = world / "junit-link.xml"
        link.symlink_to("artifacts/junit.xml")
        bundle = world / "bundle.tar.gz"
        bundle.write_bytes(b"old")
        bundle.chmod(0o644)
        if user is not None:
            os.chown(bundle, user, user)
        result = _run_outputs(["--junit", str(link)], user, world)
        assert result.returncode in (0, 1), describe(result)
        assert link.is_symlink() and os.readlink(link) == "artifacts/junit.xml"
        assert target.read_text().startswith("<?xml")
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        written = _run_outputs(["bundle", "-o", str(bundle)], user, world)
        assert written.returncode in (0, 1), describe(written)
        assert stat.S_IMODE(bundle.stat().st_mode) == 0o600, "the bundle never becomes more readable than 0600"
        assert bundle.read_bytes()[:2] == b"\x1f\x8b"
        assert sorted(p.name for p in real_dir.iterdir()) == ["junit.xml"], "a temporary file was left behind"
    finally:
        shutil.rmtree(world)


# ---------------------------------------------------------------------------------------------
# Time bounds (docs/manual.md, "Time bounds"): a run ends within T + max(2 x T, B) (T = --timeout,
# B = the self-test's budget) plus the stages' kill grace; MARGIN_S is the margin for a loaded
# 2-core CI machine on top of that.
# ---------------------------------------------------------------------------------------------

MARGIN_S = 20


def documented_bound(timeout_s: float, budget_s: float) -> float:
    return timeout_s + max(2 * timeout_s, budget_s) + 3  # + a second of kill grace per stage


def test_a_library_whose_constructor_blocks_costs_the_timeout_not_the_self_test_budget(tmp_path):
    """A hostile libnvrtc.so.13 first on LD_LIBRARY_PATH, its constructor blocking for ever: with
    --timeout 5 verification stops at 5 s, the load check does not load it again, and the self-test's
    jit test is skipped naming it, instead of waiting for the self-test's 120 s budget."""
    fake_nvrtc = FIXTURES / "fake-nvrtc" / "libnvrtc.so.13"
    if not fake_nvrtc.exists():
        pytest.skip(f"fixture not built: {fake_nvrtc}")
    env = fake_driver_env(tmp_path / "driver")
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    shutil.copy2(fake_nvrtc, hostile / "libnvrtc.so.13")
    marker = uuid.uuid4().hex
    env.update({"LD_LIBRARY_PATH": f"{hostile}:{env['LD_LIBRARY_PATH']}", "CUDADIAG_FAKE_NVRTC_LOAD": "hang",
                "CUDADIAG_TEST_MARKER": marker})
    timeout_s = 5
    start = time.monotonic()
    result = subprocess.run([str(require_binary()), "--json", "--timeout", str(timeout_s)], env=env,
                            capture_output=True, timeout=300, check=False, stdin=subprocess.DEVNULL)
    wall = time.monotonic() - start
    doc = parse_report(result)
    # Loaded at most once per stage that loads it (verification; the load check does not repeat it).
    assert wall < 3 * timeout_s + MARGIN_S, f"took {wall:.1f} s\n{describe(result)}"
    assert wall < documented_bound(timeout_s, 120) + MARGIN_S
    nvrtc_step = next(s for s in doc["verification"]["steps"] if s["kind"] == "nvrtc")
    assert nvrtc_step["status"] == "timeout", nvrtc_step
    assert "verify.timeout" in {f["id"] for f in doc["findings"]}
    jit = [t for t in (doc["selftest"] or {}).get("tests", []) if t["key"] == "jit"]
    assert jit and all(t["status"] == "skip" and str(hostile / "libnvrtc.so.13") in t["reason"] for t in jit), jit
    not_again = [closure["check"] for c in doc["linkage"]["components"] for closure in c["closures"]
                 if closure.get("check") and "not loaded again" in (closure["check"].get("detail") or "")]
    assert not_again, "the load check loaded the hanging library again"
    deadline = time.monotonic() + 3
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not marked_processes(marker), f"processes left behind: {marked_processes(marker)}"


def test_a_thousand_devices_under_a_process_limit_as_another_user_stay_within_the_bound():
    """A driver listing 1,000 devices, run by an unprivileged user whose process limit (RLIMIT_NPROC
    200) the workers could exhaust: the run still ends within its documented bound."""
    import resource
    import shutil

    if not _nobody_can_run():
        pytest.skip("needs root, and a cudadiag binary the nobody user may execute")
    world = _open_world("cudadiag-nproc-")
    try:
        env = fake_driver_env(world / "driver")
        (world / "driver").chmod(0o755)
        timeout_s, budget_s = 5, 5
        marker = uuid.uuid4().hex
        env.update({"CUDADIAG_FAKE_CUDA_DEVICES": "1000", "CUDADIAG_SELFTEST_BUDGET_S": str(budget_s),
                    "CUDADIAG_TEST_MARKER": marker, "HOME": str(world)})

        def limit_processes():
            resource.setrlimit(resource.RLIMIT_NPROC, (200, 200))

        start = time.monotonic()
        result = subprocess.run([str(require_binary()), "--json", "--timeout", str(timeout_s)], env=env, cwd=world,
                                capture_output=True, timeout=300, check=False, stdin=subprocess.DEVNULL,
                                user=NOBODY, preexec_fn=limit_processes)
        wall = time.monotonic() - start
        assert wall < documented_bound(timeout_s, budget_s) + MARGIN_S, f"took {wall:.1f} s\n{describe(result)}"
        doc = parse_report(result)
        assert doc["environment"]["uid"] == NOBODY
        deadline = time.monotonic() + 3
        while marked_processes(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not marked_processes(marker), f"processes left behind: {marked_processes(marker)}"
    finally:
        shutil.rmtree(world)
