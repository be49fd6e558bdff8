"""Builds the scenarios of tests/scenarios/cases/*.toml in temp dirs, runs the real cudadiag on each
and lists every difference from what the scenario expects. The file format is described in
tests/scenarios/README.md; test_scenarios.py is the pytest entry point.
"""

from __future__ import annotations

import base64
import collections
import ctypes
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from cudadiag_harness import (
    FIXTURES,
    SYSTEM_CTK,
    describe,
    invariant_errors,
    require_binary,
    schema_errors,
    venvs_root,
)

CASES_DIR = Path(__file__).resolve().parent / "cases"
CTK = Path(os.path.realpath(SYSTEM_CTK))
SOURCE_DIR = Path(__file__).resolve().parents[2]  # the repository
SYSTEM_PYTHON = Path("/usr/bin/python3")
TIMEOUT_S = 30

# Declared SONAMEs, newest first, for the dlopen oracle (cuda-pathfinder 1.9.1's table; cudadiag's
# catalog must agree, which tests/unit/test_probes_catalog.cpp checks for the names it lists).
DECLARED_SONAMES = {
    "cuda": ["libcuda.so.1"],
    "nvml": ["libnvidia-ml.so.1"],
    "cudart": ["libcudart.so.13", "libcudart.so.12"],
    "nvrtc": ["libnvrtc.so.13", "libnvrtc.so.12"],
    "nvJitLink": ["libnvJitLink.so.13", "libnvJitLink.so.12"],
    "nvvm": ["libnvvm.so.4", "libnvvm.so"],
    "nvfatbin": ["libnvfatbin.so.13", "libnvfatbin.so.12"],
    "cupti": ["libcupti.so.13", "libcupti.so.12"],
    "cublas": ["libcublas.so.13", "libcublas.so.12"],
    "cublasLt": ["libcublasLt.so.13", "libcublasLt.so.12"],
    "cufft": ["libcufft.so.12", "libcufft.so.11"],
    "curand": ["libcurand.so.11", "libcurand.so.10"],
    "cusolver": ["libcusolver.so.12", "libcusolver.so.11"],
    "cusparse": ["libcusparse.so.12"],
    "nccl": ["libnccl.so.2"],
    "cudnn": ["libcudnn.so.9"],
}

EM = {"i386": 3, "x86_64": 62, "aarch64": 183, "ppc64": 21, "arm": 40}


class ScenarioSkip(Exception):
    """The scenario needs something this machine lacks (a test venv, a built fixture)."""


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def scenario_files() -> list[Path]:
    return sorted(CASES_DIR.glob("*.toml"))


def load(path: Path) -> dict:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    data.setdefault("name", path.stem)
    return data


# ---------------------------------------------------------------------------------------------
# Test-built ELF files (one compile per distinct request per session)
# ---------------------------------------------------------------------------------------------


class ElfFactory:
    def __init__(self, cache_dir: Path):
        self.cache_dir = cache_dir
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.built: dict[str, Path] = {}

    def get(self, soname: str | None, elf_class: int = 64, machine: str | None = None, libc: bool = True,
            symbols: tuple[str, ...] = (), source: str = "", needed: tuple[str, ...] = (),
            runpath: str | None = None) -> Path:
        key = json.dumps([soname, elf_class, machine, libc, sorted(symbols), source] +
                         ([list(needed), runpath] if needed or runpath is not None else []))
        if key in self.built:
            return self.built[key]
        digest = hashlib.sha1(key.encode()).hexdigest()[:16]
        output = self.cache_dir / f"{digest}.so"
        if not output.exists():
            c_file = self.cache_dir / f"{digest}.c"
            body = source or "".join(f"int {name}(void) {{ return 0; }}\n" for name in symbols)
            c_file.write_text(body or "int cudadiag_scenario_placeholder(void) { return 0; }\n")
            command = ["gcc", "-shared", "-fPIC", "-o", str(output), "-x", "c", str(c_file)]
            if soname:
                command.insert(3, f"-Wl,-soname,{soname}")
            if runpath is not None:  # DT_RUNPATH, as wheels set it ($ORIGIN/../../nvidia/<component>/lib)
                command[3:3] = ["-Wl,--enable-new-dtags", f"-Wl,-rpath,{runpath}"]
            if needed:  # DT_NEEDED entries: link a stub carrying each SONAME
                command += ["-x", "none", "-Wl,--no-as-needed", *(str(self.get(name)) for name in needed)]
            if elf_class == 32:
                command[1:1] = ["-m32", "-nostdlib"]  # no 32-bit libc needed
            elif not libc:
                command.insert(1, "-nostdlib")
            done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
            if done.returncode != 0:
                raise ScenarioSkip(f"cannot build a test ELF ({' '.join(command)}): {done.stderr[-400:]}")
            if machine is not None:
                data = bytearray(output.read_bytes())
                struct.pack_into("<H", data, 18, EM[machine])  # e_machine
                output.write_bytes(bytes(data))
        self.built[key] = output
        return output


# ---------------------------------------------------------------------------------------------
# ld.so.cache (glibc's new format, as ldconfig writes it)
# ---------------------------------------------------------------------------------------------

FLAGS = {"x86-64": 0x0303, "i386": 0x0003, "aarch64": 0x0a03}


def system_cache_entries() -> list[tuple[str, str, int]]:
    """This machine's /etc/ld.so.cache as ldconfig -p prints it: (soname, path, flags)."""
    done = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30, check=False)
    entries = []
    for line in done.stdout.splitlines()[1:]:
        match = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if match:
            tags = match.group(2).split(",")
            flags = FLAGS["x86-64"] if "x86-64" in tags else FLAGS["i386"]
            entries.append((match.group(1), match.group(3), flags))
    return entries


def build_ld_so_cache(entries: list[tuple[str, str, int]]) -> bytes:
    header_size, entry_size = 48, 24
    strings_at = header_size + entry_size * len(entries)
    strings = bytearray()
    table = bytearray()
    for soname, path, flags in entries:
        key = strings_at + len(strings)
        strings += soname.encode() + b"\0"
        value = strings_at + len(strings)
        strings += path.encode() + b"\0"
        table += struct.pack("<iIIIQ", flags, key, value, 0, 0)
    header = b"glibc-ld.so.cache1.1" + struct.pack("<IIB3xI12x", len(entries), len(strings), 2, 0)
    return header + bytes(table) + bytes(strings)


# ---------------------------------------------------------------------------------------------
# Building a scenario
# ---------------------------------------------------------------------------------------------


@dataclass
class Built:
    root: Path
    env: dict
    cwd: Path
    args: list[str]
    substitutions: dict[str, str] = field(default_factory=dict)
    run_as_nobody: bool = False  # `run_as = "nobody"`: cudadiag runs as uid/gid 65534 (root only)

    def expand(self, text: str) -> str:
        for key, value in self.substitutions.items():
            text = text.replace("{" + key + "}", value)
        return text


def site_dir(venv_root: Path) -> Path:
    return venv_root / "lib" / f"python{python_version()}" / "site-packages"


_python_version = None


def python_version() -> str:
    global _python_version
    if _python_version is None:
        done = subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30, check=True)
        _python_version = done.stdout.strip()
    return _python_version


def dist_info_dir(base: Path, distribution: str) -> Path:
    normal = re.sub(r"[-_.]+", "_", distribution).lower()
    for entry in sorted(base.glob("*.dist-info")):
        if entry.name.lower().removesuffix(".dist-info").rsplit("-", 1)[0] == normal:
            return entry
    raise ScenarioSkip(f"no {distribution} dist-info under {base}")


def install_wheel(spec: dict, site: Path, factory: ElfFactory) -> None:
    """Reconstructs an installed wheel from its RECORD: `from = "toolkit"` (this machine's toolkit,
    which was assembled from the CUDA 13.0 wheels and keeps their dist-info) or `from = "wheels"`
    (the test venv of scripts/make_test_venvs.sh). Files are symlinks to the originals; with
    fake_libraries = true every .so is a copy of the original instead (a file of its own, so that it
    is not the original inode)."""
    source = spec.get("from", "toolkit")
    if source == "toolkit":
        meta_base, file_base = CTK / "dist-info", None
    elif source == "wheels":
        wheels = venvs_root() / "wheels"
        found = sorted(wheels.glob("lib/python3*/site-packages"))
        if not found:
            raise ScenarioSkip(f"test venv {wheels} missing (scripts/make_test_venvs.sh)")
        meta_base = file_base = found[0]
    else:
        raise ValueError(f"wheel from {source!r}")
    meta = dist_info_dir(meta_base, spec["dist"])
    shutil.copytree(meta, site / meta.name, dirs_exist_ok=True)
    version_override = spec.get("version")
    if version_override:
        metadata = (site / meta.name / "METADATA").read_text()
        (site / meta.name / "METADATA").write_text(re.sub(r"(?m)^Version: .*$", f"Version: {version_override}", metadata))
    only = spec.get("only")  # restrict to files under these prefixes
    kept = []  # the installed wheel's RECORD lists what it installed: `only`'s files, those that exist
    for line in (meta / "RECORD").read_text().splitlines():
        relative = line.split(",", 1)[0]
        if not relative.startswith("nvidia/"):
            kept.append(line)
            continue
        if only and not any(relative.startswith(p) for p in only):
            continue
        original = (file_base / relative) if file_base else CTK / relative.removeprefix("nvidia/cu13/")
        if not original.exists():
            continue
        kept.append(line)
        target = site / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if spec.get("fake_libraries") and ".so" in target.name:
            # A real copy (symbols and all), so that the closure the loader builds from it is real.
            shutil.copyfile(original, target)
        else:
            target.symlink_to(original)
    (site / meta.name / "RECORD").write_text("".join(line + "\n" for line in kept))


def make_venv(spec: dict, root: Path, factory: ElfFactory) -> Path:
    venv_root = root / spec["path"]
    (venv_root / "bin").mkdir(parents=True, exist_ok=True)
    include_system = "true" if spec.get("system_site_packages") else "false"
    (venv_root / "pyvenv.cfg").write_text(
        f"home = /usr/bin\ninclude-system-site-packages = {include_system}\nversion = {python_version()}\n")
    for name in ("python", "python3"):
        (venv_root / "bin" / name).symlink_to(SYSTEM_PYTHON)
    site = site_dir(venv_root)
    site.mkdir(parents=True, exist_ok=True)
    for wheel in spec.get("wheels", []):
        install_wheel(wheel, site, factory)
    return venv_root


def make_file(spec: dict, built: Built, factory: ElfFactory) -> None:
    path = Path(built.expand(spec["path"]))
    if not path.is_absolute():
        path = built.root / path
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = spec.get("make", "empty")
    if kind == "empty":
        path.write_bytes(b"")
    elif kind == "text":
        path.write_text(built.expand(spec.get("text", "")))
    elif kind == "bytes":
        path.write_bytes(bytes.fromhex(spec["hex"]) * spec.get("repeat", 1))
    elif kind == "dir":
        path.mkdir(exist_ok=True)
    elif kind == "copy":
        source = Path(built.expand(spec["from"]))
        if not source.exists():
            raise ScenarioSkip(f"{source} does not exist on this machine")
        shutil.copyfile(source, path)
    elif kind == "link":
        path.symlink_to(built.expand(spec["to"]))
    elif kind == "hardlink":  # a second name for a real file, in a directory of its own (copy if need be)
        source = Path(os.path.realpath(built.expand(spec["from"])))
        if not source.exists():
            raise ScenarioSkip(f"{source} does not exist on this machine")
        try:
            os.link(source, path)
        except OSError:
            shutil.copyfile(source, path)
    elif kind == "elf":
        shutil.copyfile(factory.get(spec.get("soname", path.name) or None, spec.get("elf_class", 64),
                                    spec.get("machine"), spec.get("libc", True), tuple(spec.get("symbols", ())),
                                    spec.get("source", ""), tuple(spec.get("needed", ())), spec.get("runpath")), path)
    elif kind == "truncated":  # the first bytes of a real library
        source = Path(built.expand(spec["from"]))
        path.write_bytes(source.read_bytes()[: spec.get("size", 4096)] if source.exists() else b"\x7fELF")
    else:
        raise ValueError(f"unknown make {kind!r}")
    if "mode" in spec:
        path.chmod(int(spec["mode"], 8))


def dist_info_path(spec: dict, built: Built) -> Path:
    site = Path(built.expand(f"{{site:{spec.get('venv', 'venv')}}}"))
    return site / f"{spec['name'].replace('-', '_')}-{spec['version']}.dist-info"


def make_dist_info(spec: dict, built: Built) -> None:
    """An installed distribution in a venv's site-packages: `<name>-<version>.dist-info/METADATA`,
    copied from `metadata` (a real release's, tests/fixtures/python_metadata) or made of Name,
    Version and `requires` (its Requires-Dist lines; none: a distribution that requires nothing)."""
    dist_info = dist_info_path(spec, built)
    dist_info.mkdir(parents=True, exist_ok=True)
    if "metadata" in spec:
        shutil.copyfile(built.expand(spec["metadata"]), dist_info / "METADATA")
    else:
        requires = "".join(f"Requires-Dist: {r}\n" for r in spec.get("requires", []))
        (dist_info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {spec['name']}\nVersion: {spec['version']}\n{requires}")


def record_line(site: Path, relative: str) -> str:
    """A RECORD line for the file the scenario built at `relative` (its size and SHA-256, as pip
    writes them)."""
    data = (site / relative).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{relative},sha256={digest},{len(data)}"


def make_record(spec: dict, built: Built) -> None:
    """The dist-info's RECORD, once the scenario's files exist: `record` (a real release's RECORD,
    tests/fixtures/releases) copied, with the lines of `record_files` (paths relative to the site
    directory) rewritten, or added, with the size and SHA-256 of the file the scenario built there:
    the test-built file stands for that release's file."""
    if "record" not in spec and "record_files" not in spec:
        return
    dist_info = dist_info_path(spec, built)
    site = dist_info.parent
    lines = Path(built.expand(spec["record"])).read_text().splitlines() if "record" in spec else []
    for relative in spec.get("record_files", []):
        line = record_line(site, relative)
        at = [i for i, old in enumerate(lines) if old.split(",", 1)[0] == relative]
        if at:
            lines[at[0]] = line
        else:
            lines.append(line)
    (dist_info / "RECORD").write_text("".join(line + "\n" for line in lines))


def build(scenario: dict, root: Path, factory: ElfFactory) -> Built:
    root.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    built = Built(root=root, env={}, cwd=root, args=[])
    built.substitutions = {"root": str(root), "ctk": str(CTK), "fixtures": str(FIXTURES),
                           "pyver": python_version(), "source": str(SOURCE_DIR)}
    path_prefix = []
    for venv_spec in scenario.get("venv", []):
        venv_root = make_venv(venv_spec, root, factory)
        built.substitutions[f"site:{venv_spec['path']}"] = str(site_dir(venv_root))
        if venv_spec.get("activate", True):
            built.env["VIRTUAL_ENV"] = str(venv_root)
            path_prefix.insert(0, str(venv_root / "bin"))
    for dist_spec in scenario.get("dist", []):
        make_dist_info(dist_spec, built)
    for file_spec in scenario.get("file", []):
        make_file(file_spec, built, factory)
    for dist_spec in scenario.get("dist", []):
        make_record(dist_spec, built)
    needs = list(scenario.get("needs_fixtures", []))
    driver = scenario.get("driver", "fake")
    if driver == "fake":
        needs += ["fake-driver/libcuda.so.1", "fake-nvml/libnvidia-ml.so.1"]
    for fixture in needs:
        if not (FIXTURES / fixture).exists():
            raise ScenarioSkip(f"fixture not built: {FIXTURES / fixture}")
    driver_entries = []
    if driver == "fake":
        # A system driver as the NVIDIA installer leaves it: in a directory of its own, in ld.so.cache.
        (root / "driver").mkdir(exist_ok=True)
        for fixture, soname in (("fake-driver/libcuda.so.1", "libcuda.so.1"),
                                ("fake-nvml/libnvidia-ml.so.1", "libnvidia-ml.so.1")):
            shutil.copyfile(FIXTURES / fixture, root / "driver" / soname)
            driver_entries.append((soname, str(root / "driver" / soname), FLAGS["x86-64"]))

    env = {"PATH": ":".join(path_prefix + ["/usr/bin", "/bin"]), "HOME": str(root / "home"), "LANG": "C.UTF-8"}
    env.update(built.env)
    for key, value in scenario.get("env", {}).items():
        env[key] = built.expand(value)
    for key in scenario.get("unset", []):
        env.pop(key, None)
    built.env = env
    built.cwd = root / built.expand(scenario.get("cwd", "."))
    built.cwd.mkdir(parents=True, exist_ok=True)

    args = [built.expand(a) for a in scenario.get("args", [])]
    cache = scenario.get("ld_so_cache", {})
    if not cache.get("use_system"):
        entries = system_cache_entries() if cache.get("base", "system") == "system" else []
        drop = set(cache.get("drop", []))
        entries = [e for e in entries if e[0] not in drop]
        added = [(a["soname"], built.expand(a["path"]), FLAGS[a.get("arch", "x86-64")]) for a in cache.get("add", [])]
        (root / "ld.so.cache").write_bytes(build_ld_so_cache(added + entries + driver_entries))
        args += ["--ld-so-cache", str(root / "ld.so.cache")]
    built.args = args
    if scenario.get("run_as") == "nobody":
        prepare_run_as_nobody(built)
    elif "run_as" in scenario:
        raise ValueError(f"unknown run_as {scenario['run_as']!r} (only \"nobody\")")
    return built


# ---------------------------------------------------------------------------------------------
# Running and comparing
# ---------------------------------------------------------------------------------------------


NOBODY = 65534


def become_nobody() -> None:
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def run_cudadiag(built: Built, args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(require_binary()), *args], env=built.env, cwd=built.cwd, capture_output=True,
                          timeout=TIMEOUT_S, stdin=subprocess.DEVNULL, check=False,
                          preexec_fn=become_nobody if built.run_as_nobody else None)


def prepare_run_as_nobody(built: Built) -> None:
    """A scenario run as `nobody` (files it must not read, made unreadable by mode): only root can
    switch users; everyone else already lacks the rights the mode takes away. The binary and the
    scenario tree must be reachable by nobody, or the scenario is skipped, saying which directory."""
    if os.geteuid() != 0:
        return
    for path in (built.root, require_binary()):
        for ancestor in Path(path).resolve().parents:
            if not os.stat(ancestor).st_mode & 0o001:
                raise ScenarioSkip(f"run_as nobody: {ancestor} is not searchable by other users")
    built.run_as_nobody = True


def component_key(key: str) -> tuple[str, str]:
    if "/" in key:
        kind, name = key.split("/", 1)
        return kind, name
    return "dynamic_lib", key


def same_path(ours: str | None, expected: str) -> bool:
    return ours is not None and os.path.realpath(ours) == os.path.realpath(expected)


def compare_choice(label: str, choice: dict | None, expected: dict, field_name: str, built: Built,
                   problems: list[str]) -> None:
    want = expected.get(field_name)
    if want is None:
        return
    want = built.expand(want)
    if want == "none":
        if choice is not None:
            problems.append(f"{label}.{field_name}: expected none, got {choice['path']}")
        return
    if choice is None:
        problems.append(f"{label}.{field_name}: expected {want}, got none")
        return
    if not same_path(choice.get("path"), want):
        problems.append(f"{label}.{field_name}: expected {want}, got {choice.get('path')} ({choice.get('found_via')})")
    fails_expected = expected.get(f"{field_name}_fails")
    fails = choice.get("fails")
    if fails_expected is None and fails:
        problems.append(f"{label}.{field_name}: expected to load, but reported to fail: {fails}")
    elif fails_expected is not None and (not fails or fails_expected.lower() not in fails.lower()):
        problems.append(f"{label}.{field_name}: expected to fail with {fails_expected!r}, got fails={fails!r}")
    for key in ("found_via", "pathfinder_found_via", "version", "is_stub", "outcome"):
        wanted_key = key if field_name == "selected" else f"{field_name}_{key}"
        if wanted_key in expected and choice.get(key) != expected[wanted_key]:
            problems.append(f"{label}.{field_name}.{key}: expected {expected[wanted_key]!r}, got {choice.get(key)!r}")


def finding_keys(report: dict) -> list[str]:
    return sorted(f"{f['id']}:{f['severity']}" for f in report.get("findings", []))


def check_report(report: dict, result: subprocess.CompletedProcess, expect: dict, built: Built) -> list[str]:
    problems = (schema_errors(report) + invariant_errors(report))[:12]
    if report.get("summary", {}).get("exit_code") != result.returncode:
        problems.append(f"summary.exit_code {report.get('summary', {}).get('exit_code')} != exit {result.returncode}")
    if "exit" in expect and result.returncode != expect["exit"]:
        problems.append(f"exit: expected {expect['exit']}, got {result.returncode}")
    if "findings" in expect:
        want = sorted(expect["findings"])
        got = finding_keys(report)
        if want != got:
            missing = list((collections.Counter(want) - collections.Counter(got)).elements())
            extra = list((collections.Counter(got) - collections.Counter(want)).elements())
            detail = [f"{f['id']}:{f['severity']}: {f['message'][:200]}" for f in report["findings"]
                      if f"{f['id']}:{f['severity']}" in extra]
            problems.append(f"findings: missing {missing}, unexpected {extra}" +
                            ("".join("\n      " + d for d in detail)))
    for name, want in expect.get("verified", {}).items():
        steps = [step for step in (report.get("verification") or {}).get("steps", []) if step["component"] == name]
        if not steps:
            problems.append(f"verified.{name}: no verification step")
        elif not same_path(steps[0]["path"], built.expand(want)):
            problems.append(f"verified.{name}: the worker loaded {steps[0]['path']}, expected {built.expand(want)}")
    for check in expect.get("finding", []):
        matches = [f for f in report["findings"] if f["id"] == check["id"]]
        if not matches:
            problems.append(f"finding {check['id']}: not raised")
            continue
        if "repair" in check and not any(f["repair"] == check["repair"] for f in matches):
            problems.append(f"finding {check['id']}: no repair class {check['repair']!r} "
                            f"(got {[f['repair'] for f in matches]})")
        for key in ("message", "remedy"):
            for needle in check.get(f"{key}_contains", []):
                needle = built.expand(needle)
                if not any(needle in f[key] for f in matches):
                    problems.append(f"finding {check['id']}: no {key} contains {needle!r} "
                                    f"(got {[f[key][:300] for f in matches]})")
            for needle in check.get(f"{key}_lacks", []):
                needle = built.expand(needle)
                if any(needle in f[key] for f in matches):
                    problems.append(f"finding {check['id']}: {key} should not contain {needle!r}")
    for key, expected in expect.get("component", {}).items():
        kind, name = component_key(key)
        entries = [c for c in report["components"] if c["kind"] == kind and c["name"] == name]
        if not entries:
            problems.append(f"{key}: not in the report")
            continue
        entry = entries[0]
        if "status" in expected and entry["status"] != expected["status"]:
            problems.append(f"{key}.status: expected {expected['status']}, got {entry['status']}")
        compare_choice(key, entry["selected"], expected, "selected", built, problems)
        compare_choice(key, entry["loader"], expected, "loader", built, problems)
        for want in expected.get("candidate", []):  # a file that must be listed, with its version and route
            path = built.expand(want["path"])
            match = [c for c in entry["candidates"] if same_path(c["path"], path)]
            if not match:
                problems.append(f"{key}: {path} is not a candidate "
                                f"(candidates: {[c['path'] for c in entry['candidates']]})")
                continue
            for field in ("version", "found_via"):
                if field in want and match[0].get(field) != want[field]:
                    problems.append(f"{key}: candidate {path}: {field} expected {want[field]!r}, "
                                    f"got {match[0].get(field)!r}")
        for path in expected.get("not_candidate", []):
            path = built.expand(path)
            if any(same_path(c["path"], path) for c in entry["candidates"]):
                problems.append(f"{key}: {path} should not be a candidate")
        if "cuda_python" in expected and entry.get("cuda_python") != expected["cuda_python"]:
            problems.append(f"{key}.cuda_python: expected {expected['cuda_python']}, got {entry.get('cuda_python')}")
        for path in expected.get("candidate_is_stub", []):
            path = built.expand(path)
            match = [c for c in entry["candidates"] if same_path(c["path"], path)]
            if not match or not match[0]["is_stub"]:
                problems.append(f"{key}: candidate {path} should be recognised as a stub "
                                f"({'is_stub false' if match else 'not a candidate'})")
    return problems


def dlopen_in_child(env: dict, cwd: Path, sonames: list[str]) -> dict:
    """What glibc's dlopen resolves for each SONAME in a child with the scenario's environment."""
    code = (
        "import ctypes, json, os, sys\n"
        "class LM(ctypes.Structure):\n"
        "    _fields_ = [('l_addr', ctypes.c_void_p), ('l_name', ctypes.c_char_p)]\n"
        "libdl = ctypes.CDLL(None)\n"
        "libdl.dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]\n"
        "out = {}\n"
        "for soname in sys.argv[1:]:\n"
        "    try:\n"
        "        handle = ctypes.CDLL(soname, mode=os.RTLD_NOW | os.RTLD_LOCAL)\n"
        "    except OSError as error:\n"
        "        out[soname] = {'error': str(error)}\n"
        "        continue\n"
        "    lm = ctypes.POINTER(LM)()\n"
        "    libdl.dlinfo(ctypes.c_void_p(handle._handle), 2, ctypes.byref(lm))\n"
        "    out[soname] = {'path': os.fsdecode(lm.contents.l_name)}\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *sonames], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    if done.returncode < 0:  # killed by a signal (SIGBUS on a truncated file): the load crashes
        return {s: {"error": f"child killed by signal {-done.returncode}", "signal": -done.returncode}
                for s in sonames}
    if done.returncode != 0:
        return {s: {"error": f"child exited {done.returncode}: {done.stderr[-300:]}"} for s in sonames}
    return json.loads(done.stdout)


def check_dlopen_oracle(report: dict, built: Built, names: list[str], words: bool = False) -> list[str]:
    """The loader answer against a real dlopen of each declared SONAME, newest first (first success),
    each in a child of its own: a child killed by a signal is the outcome "crashes" (the process would
    die there, whatever the later SONAMEs do). With `words`, a failing answer's `fails` must be what
    glibc's dlerror() said (its text after the path)."""
    problems = []
    for name in names:
        sonames = DECLARED_SONAMES[name]
        expected_path, expected_outcome, errors = None, "fails", []
        for soname in sonames:
            answer = dlopen_in_child(built.env, built.cwd, [soname])[soname]
            if "path" in answer:
                expected_path, expected_outcome = answer["path"], "loads"
                break
            errors.append(answer["error"])
            if answer.get("signal"):
                expected_outcome = "crashes"
                break
        entry = next(c for c in report["components"] if c["kind"] == "dynamic_lib" and c["name"] == name)
        loader = entry["loader"]
        ours = loader["path"] if loader and loader.get("outcome") == "loads" else None
        our_outcome = loader.get("outcome") if loader else "fails"
        if (ours is None) != (expected_path is None) or (ours and not same_path(ours, expected_path)):
            problems.append(f"dlopen oracle {name}: cudadiag loader {ours}, dlopen {expected_path} "
                            f"({'; '.join(errors)[:300]})")
        elif our_outcome != expected_outcome:
            problems.append(f"dlopen oracle {name}: cudadiag says {our_outcome}, dlopen {expected_outcome} "
                            f"({'; '.join(errors)[:300]})")
        elif words and expected_outcome == "fails" and loader and errors:
            said = errors[0].split(": ", 1)[-1]
            if loader.get("fails") != said:
                problems.append(f"dlopen oracle {name}: cudadiag says it fails with {loader.get('fails')!r}, "
                                f"dlopen with {said!r}")
    return problems


def check_inspect(spec: dict, built: Built) -> list[str]:
    """`cudadiag inspect --pid` of a live process (tests/fixtures/two_copies.c) that has dlopened
    `spec.libraries`; its findings must be exactly `spec.findings`."""
    program = FIXTURES / "cudadiag_two_copies"
    if not program.is_file():
        raise ScenarioSkip(f"fixture not built: {program}")
    libraries = [built.expand(p) for p in spec["libraries"]]
    process = subprocess.Popen([str(program), *libraries], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               env=built.env, cwd=built.cwd)
    try:
        if process.stdout.readline().strip() != b"ready":
            return [f"inspect: {program} did not start with {libraries}"]
        done = run_cudadiag(built, ["inspect", "--pid", str(process.pid), "--json"])
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    problems = []
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        return [f"inspect: not JSON\n{describe(done)}"]
    got = finding_keys(doc)
    if sorted(spec.get("findings", [])) != got:
        problems.append(f"inspect findings: expected {sorted(spec.get('findings', []))}, got {got}")
    if "exit" in spec and done.returncode != spec["exit"]:
        problems.append(f"inspect: exit {done.returncode}, expected {spec['exit']}")
    return problems


QUICK_CHECK_CHILD = """
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
lib.cudadiag_last_error.restype = ctypes.c_char_p
options, report = ctypes.c_void_p(), ctypes.c_void_p()
assert lib.cudadiag_options_new(ctypes.byref(options)) == 0
if lib.cudadiag_options_from_json(options, sys.argv[2].encode()) != 0 or \\
        lib.cudadiag_quick_check(options, ctypes.byref(report)) != 0:
    sys.exit("quick_check failed: " + lib.cudadiag_last_error().decode())
lib.cudadiag_report_json_str.argtypes = [ctypes.c_void_p]
lib.cudadiag_report_json_str.restype = ctypes.c_char_p
print(lib.cudadiag_report_json_str(report).decode())
"""


def check_quick_check(spec: dict, built: Built) -> list[str]:
    """quick_check() through the C API, in a child with the scenario's environment and working
    directory (the call reads this process's own environment): its findings are exactly
    `spec.findings`, its component kinds `spec.kinds`, its `linkage.frameworks` count `spec.frameworks`."""
    library = Path(os.environ.get("CUDADIAG_LIBRARY", ""))
    if not library.is_file():
        raise ScenarioSkip(f"libcudadiag not built at {library} (set CUDADIAG_LIBRARY)")
    options = {}
    if "--ld-so-cache" in built.args:
        options["ld_so_cache"] = built.args[built.args.index("--ld-so-cache") + 1]
    done = subprocess.run([sys.executable, "-c", QUICK_CHECK_CHILD, str(library), json.dumps(options)],
                          env=built.env, cwd=built.cwd, capture_output=True, timeout=TIMEOUT_S, check=False,
                          preexec_fn=become_nobody if built.run_as_nobody else None)
    try:
        doc = json.loads(done.stdout.decode("utf-8"))
    except ValueError:
        return [f"quick_check: not JSON\n{describe(done)}"]
    problems = [f"quick_check: {p}" for p in (schema_errors(doc) + invariant_errors(doc))[:12]]
    got = finding_keys(doc)
    if sorted(spec.get("findings", [])) != got:
        problems.append(f"quick_check findings: expected {sorted(spec.get('findings', []))}, got {got}")
    kinds = sorted({c["kind"] for c in doc["components"]})
    if "kinds" in spec and sorted(spec["kinds"]) != kinds:
        problems.append(f"quick_check kinds: expected {sorted(spec['kinds'])}, got {kinds}")
    frameworks = len(doc["linkage"]["frameworks"])
    if "frameworks" in spec and spec["frameworks"] != frameworks:
        problems.append(f"quick_check: {frameworks} frameworks' closures, expected {spec['frameworks']}")
    if "exit" in spec and doc["summary"]["exit_code"] != spec["exit"]:
        problems.append(f"quick_check: exit code {doc['summary']['exit_code']}, expected {spec['exit']}")
    return problems


def run_scenario(scenario: dict, root: Path, factory: ElfFactory) -> list[str]:
    built = build(scenario, root, factory)
    mode = ["--json"] + ([] if scenario.get("load") else ["--no-load"])
    args = mode + built.args
    result = run_cudadiag(built, args)
    problems = []
    try:
        report = json.loads(result.stdout.decode("utf-8"))
    except ValueError as error:
        return [f"stdout is not one JSON document ({error})\n{describe(result)}"]
    problems += check_report(report, result, scenario.get("expect", {}), built)
    if scenario.get("dlopen_oracle"):
        problems += check_dlopen_oracle(report, built, scenario["dlopen_oracle"],
                                        scenario.get("dlopen_oracle_words", False))
    for find in scenario.get("expect", {}).get("find", []):
        find_args = ["find", *([] if "headers" not in find else ["--headers"]), find["name"], *built.args]
        done = run_cudadiag(built, find_args)
        if "exit" in find and done.returncode != find["exit"]:
            problems.append(f"find {find['name']}: exit {done.returncode}, expected {find['exit']}\n{describe(done)}")
        if "stdout" in find:
            stdout = done.stdout.decode(errors="replace").strip()
            want = built.expand(find["stdout"])
            if not (stdout == want or (want and same_path(stdout, want))):
                problems.append(f"find {find['name']}: printed {stdout!r}, expected {want!r}")
        for needle in find.get("stderr_contains", []):
            if built.expand(needle) not in done.stderr.decode(errors="replace"):
                problems.append(f"find {find['name']}: stderr lacks {needle!r}: {done.stderr[-500:]!r}")
    if "inspect" in scenario:
        problems += check_inspect(scenario["inspect"], built)
    if "quick_check" in scenario.get("expect", {}):
        problems += check_quick_check(scenario["expect"]["quick_check"], built)
    for extra in scenario.get("expect", {}).get("command", []):
        done = run_cudadiag(built, [built.expand(a) for a in extra["args"]])
        if "exit" in extra and done.returncode != extra["exit"]:
            problems.append(f"{extra['args']}: exit {done.returncode}, expected {extra['exit']}\n{describe(done)}")
        output = (done.stdout + done.stderr).decode(errors="replace")
        for needle in extra.get("output_contains", []):
            if built.expand(needle) not in output:
                problems.append(f"{extra['args']}: output lacks {needle!r}:\n{output[-1500:]}")
    return problems
