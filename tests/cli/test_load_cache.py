"""The load-check cache (docs/manual.md, "The load-check cache"): a closure proven by a real load is
not loaded again while its files, the loader's configuration and the worker are unchanged; a change
loads again exactly the closures it can affect; a corrupt, truncated or foreign cache is ignored and
rebuilt; the cache is private (0600 in a 0700 directory); a cache that cannot be written never fails
the run.

The closures under test are two test-built libraries with catalog SONAMEs (cuFFT, cuRAND), each in a
directory of its own, reached through a private loader cache (`--ld-so-cache`, built by ldconfig), so
that one library's change can be told from the other's."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import SYSTEM_CTK, clean_env, compile_shared_library, describe, parse_report, run

CUFFT = "libcufft.so.12"
CURAND = "libcurand.so.10"


def ldconfig() -> str:
    for candidate in ("/sbin/ldconfig", "/usr/sbin/ldconfig", shutil.which("ldconfig")):
        if candidate and os.path.exists(candidate):
            return candidate
    pytest.skip("ldconfig not found")


def build_loader_cache(conf_dirs: list[Path], cache: Path) -> Path:
    conf = cache.with_suffix(".conf")
    conf.write_text("".join(f"{d}\n" for d in conf_dirs))
    made = subprocess.run([ldconfig(), "-f", str(conf), "-C", str(cache)], capture_output=True, text=True,
                          timeout=60, check=False)
    if made.returncode != 0 or not cache.exists():
        pytest.skip(f"ldconfig could not write a private cache: {made.stderr}")
    return cache


class Stack:
    """Two libraries in two directories, a private loader cache naming both, a private cache home."""

    def __init__(self, root: Path):
        self.root = root
        self.fft_dir = root / "fft"
        self.rand_dir = root / "rand"
        self.fft = compile_shared_library(self.fft_dir, CUFFT, "int cufftGetVersion(int*v){*v=12000;return 0;}\n")
        self.rand = compile_shared_library(self.rand_dir, CURAND, "int curandGetVersion(int*v){*v=10000;return 0;}\n")
        self.loader_cache = build_loader_cache([self.fft_dir, self.rand_dir], root / "ld.so.cache")
        self.cache_home = root / "xdg-cache"

    @property
    def cache_file(self) -> Path:
        return self.cache_home / "cudadiag" / "load-check.json"

    def env(self, **overrides) -> dict:
        return clean_env(XDG_CACHE_HOME=str(self.cache_home), **overrides)

    def report(self, *args, env: dict | None = None) -> dict:
        result = run(["--json", "--no-selftest", "--ld-so-cache", str(self.loader_cache), *args],
                     env=env if env is not None else self.env(), cwd=self.root, timeout=60)
        assert result.returncode in (0, 1), describe(result)
        return parse_report(result)


def closures(doc: dict) -> list[tuple[str, dict]]:
    return [(c["name"], closure) for c in doc["linkage"]["components"] for closure in c["closures"]]


def holds(closure: dict, path: Path) -> bool:
    real = os.path.realpath(path)
    return any(o["realpath"] == real or o["path"] == str(path) for o in closure["objects"])


def ours(doc: dict, path: Path) -> list[dict]:
    found = [closure for _, closure in closures(doc) if holds(closure, path)]
    assert found, f"no closure holds {path}: {[name for name, _ in closures(doc)]}"
    return found


def cached(closure: dict) -> bool:
    return closure["check"] is not None and closure["check"]["cache"] is not None


@pytest.fixture
def stack(tmp_path) -> Stack:
    return Stack(tmp_path)


def test_second_run_is_answered_from_the_cache_and_the_cache_is_private(stack):
    first = stack.report()
    use = first["linkage"]["load_check"]["cache"]
    assert use["mode"] == "read_write" and use["problem"] is None, use
    assert use["hits"] == 0 and use["stored"] > 0, use
    assert use["path"] == str(stack.cache_file)
    assert stat.S_IMODE(stack.cache_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(stack.cache_file.parent.stat().st_mode) == 0o700
    checked = [closure for _, closure in closures(first) if closure["check"] is not None]
    assert checked and not any(cached(closure) for closure in checked)

    second = stack.report()
    use = second["linkage"]["load_check"]["cache"]
    assert use["hits"] == len([c for _, c in closures(second) if c["check"] and c["check"]["status"] == "ok"]), use
    assert use["stored"] == 0, use
    for (name, before), (_, after) in zip(closures(first), closures(second)):
        if before["check"] is None or before["check"]["status"] != "ok":
            continue
        assert cached(after), name
        assert after["check"]["cache"]["proven_at"].endswith("Z")
        assert after["check"]["elapsed_ms"] == 0
        # The same answer, judged again against this run's prediction.
        for key in ("agrees", "loads", "error", "differences", "already_in_worker", "also_loaded"):
            assert after["check"][key] == before["check"][key], (name, key)
    for closure in ours(second, stack.fft) + ours(second, stack.rand):
        assert closure["check"]["agrees"] and closure["check"]["loads"], closure["check"]


def test_touching_a_library_loads_again_only_the_closures_that_hold_it(stack):
    stack.report()
    os.utime(stack.fft, None)  # same content, new mtime and ctime
    doc = stack.report()
    assert not any(cached(closure) for closure in ours(doc, stack.fft))
    assert all(cached(closure) for closure in ours(doc, stack.rand))
    assert doc["linkage"]["load_check"]["cache"]["stored"] == len(ours(doc, stack.fft))
    # The new proof is used next time.
    assert all(cached(closure) for closure in ours(stack.report(), stack.fft))


def test_replacing_a_library_loads_again_only_the_closures_of_its_directory(stack):
    stack.report()
    replacement = stack.root / "new" / CUFFT
    compile_shared_library(replacement.parent, CUFFT, "int cufftGetVersion(int*v){*v=12001;return 0;}\n")
    os.replace(replacement, stack.fft)  # a new inode under the old name
    doc = stack.report()
    assert not any(cached(closure) for closure in ours(doc, stack.fft))
    assert all(cached(closure) for closure in ours(doc, stack.rand))


def test_a_new_ld_library_path_entry_loads_every_closure_again(stack):
    stack.report()
    extra = stack.root / "extra"
    extra.mkdir()
    doc = stack.report(env=stack.env(LD_LIBRARY_PATH=str(extra)))
    checked = [closure for _, closure in closures(doc) if closure["check"] is not None]
    assert checked and not any(cached(closure) for closure in checked)
    # Both configurations are kept: the first one's proofs still answer it.
    again = stack.report()
    assert all(cached(closure) for closure in ours(again, stack.fft) + ours(again, stack.rand))


def test_a_new_loader_cache_loads_every_closure_again(stack):
    stack.report()
    build_loader_cache([stack.fft_dir, stack.rand_dir], stack.root / "ld.so.cache.new")
    os.replace(stack.root / "ld.so.cache.new", stack.loader_cache)
    doc = stack.report()
    checked = [closure for _, closure in closures(doc) if closure["check"] is not None]
    assert checked and not any(cached(closure) for closure in checked)


def corrupt(kind: str, path: Path) -> None:
    text = path.read_text()
    if kind == "garbage":
        path.write_bytes(b"\x00\x01not json at all")
    elif kind == "truncated":
        path.write_text(text[: len(text) // 2])
    elif kind == "empty":
        path.write_text("")
    elif kind == "foreign-version":
        doc = json.loads(text)
        doc["version"] = 999
        path.write_text(json.dumps(doc))
    elif kind == "foreign-format":
        doc = json.loads(text)
        doc["format"] = "something else"
        path.write_text(json.dumps(doc))
    elif kind == "bad-answer":
        doc = json.loads(text)
        doc["entries"][0]["facts"] = "{\"not\": \"a link map\"}"
        path.write_text(json.dumps(doc))
    elif kind == "bad-identity":
        doc = json.loads(text)
        doc["entries"][0]["files"][0] = ["/x", True, -1, "inode", 0, 0, 0]
        path.write_text(json.dumps(doc))
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["garbage", "truncated", "empty", "foreign-version", "foreign-format",
                                  "bad-answer", "bad-identity"])
def test_a_corrupt_or_foreign_cache_is_ignored_and_rebuilt(stack, kind):
    stack.report()
    corrupt(kind, stack.cache_file)
    doc = stack.report()
    use = doc["linkage"]["load_check"]["cache"]
    assert use["hits"] == 0, use
    if kind != "empty":
        assert use["problem"] and use["problem"].startswith("ignored"), use
    assert not any(cached(closure) for _, closure in closures(doc))
    # Rebuilt: valid again, and answering the next run.
    assert json.loads(stack.cache_file.read_text())["version"] == 1
    assert stat.S_IMODE(stack.cache_file.stat().st_mode) == 0o600
    again = stack.report()
    assert again["linkage"]["load_check"]["cache"]["hits"] > 0


def test_an_unwritable_cache_directory_does_not_fail_the_run(stack, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    env = clean_env(XDG_CACHE_HOME=str(blocker / "cache"))
    doc = stack.report(env=env)
    use = doc["linkage"]["load_check"]["cache"]
    assert use["mode"] == "off" and use["problem"].startswith("not used"), use
    assert doc["linkage"]["load_check"]["ran"] is True
    assert all(c["check"] is None or not cached(c) for _, c in closures(doc))


def test_a_cache_directory_of_another_user_is_not_used(stack):
    if os.geteuid() != 0:
        pytest.skip("needs root to give the directory to another user")
    directory = stack.cache_file.parent
    directory.mkdir(parents=True)
    os.chown(directory, 65534, 65534)
    doc = stack.report()
    use = doc["linkage"]["load_check"]["cache"]
    assert use["mode"] == "off" and "not to this user" in use["problem"], use
    assert not stack.cache_file.exists()


def test_an_open_cache_directory_is_narrowed_to_the_user(stack):
    directory = stack.cache_file.parent
    directory.mkdir(parents=True)
    directory.chmod(0o755)
    stack.report()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE(stack.cache_file.stat().st_mode) == 0o600


@pytest.mark.parametrize("how", ["--no-cache", "CUDADIAG_CACHE=0"])
def test_the_cache_can_be_turned_off(stack, how):
    stack.report()
    before = stack.cache_file.read_bytes()
    if how == "--no-cache":
        doc = stack.report("--no-cache")
    else:
        doc = stack.report(env=stack.env(CUDADIAG_CACHE="0"))
    use = doc["linkage"]["load_check"]["cache"]
    assert use["mode"] == "off" and use["hits"] == 0 and use["stored"] == 0, use
    assert not any(cached(closure) for _, closure in closures(doc))
    assert any(closure["check"] is not None for _, closure in closures(doc))
    assert stack.cache_file.read_bytes() == before


def test_no_load_check_verifies_without_loading_the_closures(stack):
    if not (SYSTEM_CTK / "lib64").is_dir():
        pytest.skip(f"no toolkit at {SYSTEM_CTK} for verification to load")
    doc = stack.report("--no-load-check", env=stack.env(CUDA_HOME=str(SYSTEM_CTK)))
    assert doc["verification"]["ran"] is True, doc["verification"]["skipped_reason"]
    assert doc["verification"]["steps"]
    check = doc["linkage"]["load_check"]
    assert check["ran"] is False and check["skipped_reason"].startswith("--no-load-check"), check
    assert all(closure["check"] is None for _, closure in closures(doc))
    # Only verification's facts of the files may have been kept: no closure was proven.
    if stack.cache_file.exists():
        entries = json.loads(stack.cache_file.read_text())["entries"]
        assert all("\nverify " in entry["key"] for entry in entries), [e["key"][-200:] for e in entries]


def test_full_text_report_says_which_loads_came_from_the_cache(stack):
    stack.report()
    result = run(["--full", "--no-selftest", "--width", "200", "--ld-so-cache", str(stack.loader_cache)],
                 env=stack.env(NO_COLOR="1"), cwd=stack.root, timeout=60)
    assert result.returncode in (0, 1), describe(result)
    text = result.stdout.decode()
    assert "answered from the cache of proven loads" in text, text[-3000:]


def test_the_libraries_own_answers_are_cached_and_the_driver_is_always_asked_live(stack):
    """NVRTC's and nvJitLink's answers are facts of their files; the driver's, NVML's and cudart's
    (which asks the driver) are asked again on every run."""
    nvrtc = sorted((SYSTEM_CTK / "lib64").glob("libnvrtc.so.1[0-9]"))
    if not nvrtc:
        pytest.skip(f"no NVRTC under {SYSTEM_CTK}/lib64")
    toolkit = stack.root / "cuda"
    (toolkit / "lib64").mkdir(parents=True)
    for library in (SYSTEM_CTK / "lib64").glob("libnvrtc*.so*"):
        (toolkit / "lib64" / library.name).symlink_to(library.resolve())
    for library in (SYSTEM_CTK / "lib64").glob("libnvJitLink.so*"):
        (toolkit / "lib64" / library.name).symlink_to(library.resolve())
    env = stack.env(CUDA_HOME=str(toolkit))
    first = stack.report(env=env)
    second = stack.report(env=env)
    steps = {s["component"]: s for s in second["verification"]["steps"]}
    assert "nvrtc" in steps, list(steps)
    before = {s["component"]: s for s in first["verification"]["steps"]}
    for name, step in steps.items():
        if name in ("nvrtc", "nvJitLink") and before[name]["status"] == "ok":
            assert step["cache"] is not None and step["cache"]["proven_at"].endswith("Z"), name
            assert step["result"] == before[name]["result"], name
        else:
            assert step["cache"] is None, name
    assert second["linkage"]["load_check"]["cache"]["facts"] == sum(1 for s in steps.values() if s["cache"])
    # A changed directory (the link replaced by a new one to the same file) asks NVRTC again.
    link = toolkit / "lib64" / nvrtc[-1].name
    target = os.readlink(link)
    link.unlink()
    link.symlink_to(target)
    third = {s["component"]: s for s in stack.report(env=env)["verification"]["steps"]}
    assert third["nvrtc"]["cache"] is None
    assert {s["component"]: s for s in stack.report("--no-cache", env=env)["verification"]["steps"]}["nvrtc"]["cache"] is None
