"""Shared helpers for the tests that run the real cudadiag binary (tests/cli, tests/real_layouts).

Configuration comes from the environment ctest sets (tests/cli/CMakeLists.txt); every variable has
a default so `pytest tests/cli` works by hand from the source tree after a build:

    CUDADIAG_BIN         the cudadiag executable      (default: <source>/build/cli/cudadiag)
    CUDADIAG_SCHEMA      the JSON schema               (default: <source>/docs/schema/report.schema.json)
    CUDADIAG_SOURCE_DIR  the source tree               (default: two levels above this file)
    CUDADIAG_TEST_VENVS  scripts/make_test_venvs.sh's DEST (default: <source>/build/test-venvs,
                         else <source>/build-venvs)
"""

from __future__ import annotations

import collections
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("CUDADIAG_SOURCE_DIR") or Path(__file__).resolve().parents[2])
CUDADIAG_BIN = Path(os.environ.get("CUDADIAG_BIN") or SOURCE_DIR / "build" / "cli" / "cudadiag")
SCHEMA_PATH = Path(os.environ.get("CUDADIAG_SCHEMA") or SOURCE_DIR / "docs" / "schema" / "report.schema.json")

#: Every invocation must finish well within this (the bad-input matrix relies on it).
TIMEOUT_S = 30

#: The toolkit this machine (and CI) is documented to have.
SYSTEM_CTK = Path("/usr/local/cuda")

VENV_MARKER = ".cudadiag-test-venv-complete"


def venvs_root() -> Path:
    configured = os.environ.get("CUDADIAG_TEST_VENVS")
    if configured:
        return Path(configured)
    for candidate in (SOURCE_DIR / "build" / "test-venvs", SOURCE_DIR / "build-venvs"):
        if candidate.is_dir():
            return candidate
    return SOURCE_DIR / "build" / "test-venvs"


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    def site_packages(self) -> Path:
        found = sorted(self.root.glob("lib/python3*/site-packages"))
        assert found, f"no site-packages under {self.root}"
        return found[0]

    def activated_env(self, base: dict | None = None) -> dict:
        """`base` (default: this process's environment) as `source bin/activate` would leave it."""
        env = dict(os.environ if base is None else base)
        env["VIRTUAL_ENV"] = str(self.root)
        env["PATH"] = f"{self.bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
        env.pop("PYTHONHOME", None)
        return env


def venv(name: str) -> Venv:
    """The named test venv ("wheels" or "bare"); skips the test when it has not been created."""
    root = venvs_root() / name
    if not (root / VENV_MARKER).is_file() or not (root / "bin" / "python").exists():
        pytest.skip(f"test venv {root} missing: run scripts/make_test_venvs.sh {venvs_root()}")
    return Venv(root)


# ---------------------------------------------------------------------------------------------
# Running the binary
# ---------------------------------------------------------------------------------------------


def require_binary() -> Path:
    if not CUDADIAG_BIN.is_file():
        pytest.skip(f"cudadiag not built at {CUDADIAG_BIN} (set CUDADIAG_BIN)")
    return CUDADIAG_BIN


def run(args, env=None, cwd=None, timeout=TIMEOUT_S, user=None) -> subprocess.CompletedProcess:
    """Runs cudadiag with `args`; stdout and stderr are bytes. Fails the test on a timeout. As another
    `user`, skips the test when that user may not execute the binary (a checkout under /root, mode
    700, as on a fresh machine where root cloned it): the precondition of such a test is missing."""
    command = [str(require_binary()), *[os.fsdecode(a) if isinstance(a, Path) else a for a in args]]
    try:
        return subprocess.run(command, env=env, cwd=cwd, capture_output=True, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL, user=user)
    except subprocess.TimeoutExpired:
        pytest.fail(f"cudadiag {args} did not finish within {timeout}s")
    except PermissionError as error:
        if user is None:
            raise
        pytest.skip(f"user {user} may not execute {command[0]}: {error}")


def run_in_pty(args, env=None, timeout=TIMEOUT_S) -> tuple[int, bytes]:
    """Runs cudadiag with stdout and stderr on a pseudo-terminal; returns (exit code, all output)."""
    master, slave = pty.openpty()
    # A sane window size: some renderers ask the terminal how wide it is.
    import fcntl
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    process = subprocess.Popen([str(require_binary()), *args], env=env, stdin=subprocess.DEVNULL,
                               stdout=slave, stderr=slave, close_fds=True)
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
    return process.wait(timeout=timeout), bytes(output)


def describe(result: subprocess.CompletedProcess) -> str:
    def tail(data: bytes) -> str:
        text = data.decode("utf-8", errors="replace")
        return text if len(text) < 4000 else "..." + text[-4000:]

    return f"exit {result.returncode}\n--- stdout ---\n{tail(result.stdout)}\n--- stderr ---\n{tail(result.stderr)}"


# ---------------------------------------------------------------------------------------------
# Checking reports
# ---------------------------------------------------------------------------------------------

_validator = None


def validator():
    global _validator
    if _validator is None:
        import jsonschema

        schema = json.loads(SCHEMA_PATH.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        _validator = jsonschema.Draft202012Validator(schema)
    return _validator


_other_validators: dict = {}


def other_schema_errors(schema_name: str, doc) -> list[str]:
    """Problems of `doc` against docs/schema/SCHEMA_NAME (inspect.schema.json, diff.schema.json)."""
    if schema_name not in _other_validators:
        import jsonschema

        schema = json.loads((SOURCE_DIR / "docs" / "schema" / schema_name).read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        _other_validators[schema_name] = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}"
            for e in _other_validators[schema_name].iter_errors(doc)]


def schema_errors(doc) -> list[str]:
    errors = sorted(validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    messages = []
    for error in errors:
        location = "/".join(str(p) for p in error.absolute_path) or "(root)"
        message = error.message if len(error.message) < 300 else error.message[:120] + " ... " + error.message[-160:]
        schema_location = "/".join(str(p) for p in error.absolute_schema_path)
        messages.append(f"{location}: {message} [schema: {schema_location}]")
        for sub in (error.context or [])[:4]:
            sub_location = "/".join(str(p) for p in sub.absolute_path)
            messages.append(f"    {location}/{sub_location}: {sub.message[:200]}")
    return messages


def invariant_errors(doc) -> list[str]:
    """Consistency the schema cannot express."""
    problems = []
    counts = collections.Counter(f["severity"] for f in doc.get("findings", []))
    summary = doc.get("summary", {})
    for severity in ("error", "warning", "info"):
        if summary.get("counts", {}).get(severity) != counts.get(severity, 0):
            problems.append(f"summary.counts.{severity} = {summary.get('counts', {}).get(severity)} "
                            f"but findings have {counts.get(severity, 0)}")
    seen = set()
    for component in doc.get("components", []):
        key = (component.get("kind"), component.get("name"))
        if key in seen:
            problems.append(f"component {key} listed twice")
        seen.add(key)
        paths = {c["path"]: c for c in component.get("candidates", [])}
        for alias_owner in component.get("candidates", []):
            for alias in alias_owner.get("also_found_as", []):
                paths.setdefault(alias["path"], alias_owner)
        for field in ("selected", "loader"):
            choice = component.get(field)
            if not choice:
                continue
            candidate = paths.get(choice["path"])
            if candidate is None:
                problems.append(f"{key} {field} path {choice['path']!r} is not among its candidates")
            elif candidate.get("rejected") and not choice.get("fails"):
                problems.append(f"{key} {field} chose rejected candidate {choice['path']!r} without saying it fails: "
                                f"{candidate['rejected']}")
    return problems


def parse_report(result: subprocess.CompletedProcess, *, check_exit_code: bool = True, validate: bool = True) -> dict:
    """Parses stdout as one strict-UTF-8 JSON document, validates it and checks invariants
    (validate=False: parse only, for tests that check one thing and leave validity to another)."""
    try:
        text = result.stdout.decode("utf-8")
    except UnicodeDecodeError as error:
        pytest.fail(f"stdout is not valid UTF-8 ({error})\n{describe(result)}")
    try:
        doc = json.loads(text)
    except ValueError as error:
        pytest.fail(f"stdout is not one JSON document ({error})\n{describe(result)}")
    if not validate:
        return doc
    problems = schema_errors(doc) + invariant_errors(doc)
    if check_exit_code and doc.get("summary", {}).get("exit_code") != result.returncode:
        problems.append(f"summary.exit_code {doc.get('summary', {}).get('exit_code')} != process exit {result.returncode}")
    if problems:
        pytest.fail("report problems:\n  " + "\n  ".join(problems[:40]) + f"\n(stderr: {result.stderr[-2000:]!r})")
    return doc


def run_report(args=(), env=None, cwd=None, user=None, allowed_exit=(0, 1)) -> dict:
    """`cudadiag --json ARGS`: checks the exit code is allowed and the document is valid."""
    result = run(["--json", *args], env=env, cwd=cwd, user=user)
    assert result.returncode in allowed_exit, describe(result)
    return parse_report(result)


def component(doc: dict, name: str, kind: str = "dynamic_lib") -> dict:
    for entry in doc["components"]:
        if entry["name"] == name and entry["kind"] == kind:
            return entry
    pytest.fail(f"no component {kind} {name!r} in report (have {[(c['kind'], c['name']) for c in doc['components']]})")


def finding_ids(doc: dict) -> list[str]:
    return [finding["id"] for finding in doc["findings"]]


def all_candidate_paths(entry: dict) -> dict[str, dict]:
    """path -> candidate, including also_found_as aliases."""
    paths = {}
    for candidate in entry["candidates"]:
        paths[candidate["path"]] = candidate
        for alias in candidate["also_found_as"]:
            paths.setdefault(alias["path"], candidate)
    return paths


# ---------------------------------------------------------------------------------------------
# Building fake layouts
# ---------------------------------------------------------------------------------------------


def clean_env(**overrides) -> dict:
    """A minimal environment with no CUDA-related variables; values may be str or bytes."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8"}
    if "XDG_CACHE_HOME" in os.environ:  # where ctest keeps the load-check cache of test runs
        env["XDG_CACHE_HOME"] = os.environ["XDG_CACHE_HOME"]
    env.update(overrides)
    return env


def elf_header(elf_class: int, machine: int, size: int = 4096) -> bytes:
    """A minimal little-endian ET_DYN ELF header for `machine`, zero-padded to `size` bytes."""
    if elf_class == 32:
        ident = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8)
        header = ident + struct.pack("<HHIIIIIHHHHHH", 3, machine, 1, 0, 0, 0, 0, 52, 0, 0, 0, 0, 0)
    else:
        ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
        header = ident + struct.pack("<HHIQQQIHHHHHH", 3, machine, 1, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0)
    return header + bytes(max(0, size - len(header)))


EM_386 = 3
EM_X86_64 = 62
EM_AARCH64 = 183


def compile_shared_library(directory: Path, soname: str, source: str = "") -> Path:
    """Builds `directory/soname`, a real loadable shared object with that SONAME (cc needed)."""
    directory.mkdir(parents=True, exist_ok=True)
    c_file = directory / f".{soname}.c"
    c_file.write_text(source or "int cudadiag_test_placeholder(void) { return 0; }\n")
    output = directory / soname
    compilers = [c for c in (os.environ.get("CC"), "cc", "gcc", "clang", "c++", "g++") if c and shutil.which(c)]
    errors = []
    try:
        for compiler in compilers:
            done = subprocess.run([compiler, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(output),
                                   "-x", "c", str(c_file)], capture_output=True, text=True, timeout=60, check=False)
            if done.returncode == 0:
                return output
            errors.append(f"{compiler}: {done.stderr.strip()[:300]}")
    finally:
        c_file.unlink(missing_ok=True)
    pytest.skip(f"cannot build a test shared library ({'; '.join(errors) or 'no C compiler on PATH'})")


def real_system_lib(soname: str) -> Path:
    path = SYSTEM_CTK / "lib64" / soname
    if not path.exists():
        path = SYSTEM_CTK / "lib" / soname
    if not path.exists():
        pytest.skip(f"system toolkit has no {soname} under {SYSTEM_CTK}")
    return path


# ---------------------------------------------------------------------------------------------
# pytest plumbing shared by both conftest.py files
# ---------------------------------------------------------------------------------------------

SKIP_EXIT_CODE = 77


class SkipAllToExit77:
    """Turns "every test was skipped" into exit status 77, which ctest reports as a skip."""

    def __init__(self):
        self.outcomes = collections.Counter()

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            self.outcomes[report.outcome] += 1

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if exitstatus == 0 and self.outcomes["skipped"] and not self.outcomes["passed"] and not self.outcomes["failed"]:
            session.exitstatus = SKIP_EXIT_CODE


def register_plugins(config):
    if not config.pluginmanager.has_plugin("cudadiag-skip-all"):
        config.pluginmanager.register(SkipAllToExit77(), "cudadiag-skip-all")
    name_the_system_toolkit()


def name_the_system_toolkit():
    """The tests that inherit this process's environment run as a user of the documented toolkit
    whose shell names it, as the CI machine's does (CUDA_HOME=/usr/local/cuda): they find the
    toolkit whether or not this machine's loader is told of its library directory (an
    /etc/ld.so.conf.d entry). A shell that names a toolkit itself is left as it is; a test that
    needs neither variable drops them."""
    if not os.environ.get("CUDA_HOME") and not os.environ.get("CUDA_PATH") and SYSTEM_CTK.is_dir():
        os.environ["CUDA_HOME"] = str(SYSTEM_CTK)


if __name__ == "__main__":
    sys.exit("this is a helper module for pytest")


FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or SOURCE_DIR / "build" / "tests" / "fixtures")


def fake_driver_env(directory: Path, file_name: str = "libcuda.so.1") -> dict:
    """A clean environment whose loader finds the fake driver (tests/fixtures/fake_libcuda.c, mode "ok")
    copied into `directory` as `file_name` (with a libcuda.so.1 link to it when the name differs), and
    the system toolkit as CUDA_HOME. Skips the test when the fixture is not built."""
    import pytest

    source = FIXTURES / "fake-driver" / "libcuda.so.1"
    if not source.is_file():
        pytest.skip(f"fixture not built: {source}")
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, directory / file_name)
    if file_name != "libcuda.so.1":
        (directory / "libcuda.so.1").symlink_to(file_name)
    return clean_env(CUDA_HOME=str(SYSTEM_CTK), LD_LIBRARY_PATH=str(directory), CUDADIAG_FAKE_CUDA="ok")

