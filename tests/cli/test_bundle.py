"""`cudadiag bundle` through the real binary: a planted environment full of fake secrets must give a
bundle that contains none of them — in any extracted file, in any encoding, nor in the raw .tar.gz —
while the manifest says what was redacted; --redact-paths; nvidia-smi that hangs; a target that
cannot be written (nothing half-written left behind); env values with newlines and non-UTF-8 bytes."""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from cudadiag_harness import SYSTEM_CTK, clean_env, describe, run, schema_errors

# Secrets planted in the environment; none may appear in the bundle in any form.
TOKEN = "hf_PLANTEDtoken0123456789"
AWS_SECRET = "PLANTED/aws+secret=KEY0123"
PASSWORD = "PLANTED-pa$$word-42"
MULTILINE = b"PLANTED-first-line\nPLANTED-second-\xff-line"
URL_PASSWORD = "PLANTEDurlpass77"


def secret_forms() -> list[bytes]:
    """Every secret as raw bytes, as cudadiag's JSON text carries it (\\xNN) and JSON-escaped."""
    forms = []
    for secret in (TOKEN.encode(), AWS_SECRET.encode(), PASSWORD.encode(), MULTILINE, URL_PASSWORD.encode()):
        forms.append(secret)
        text = secret.decode("utf-8", errors="backslashreplace")
        forms.append(text.encode())
        forms.append(json.dumps(text)[1:-1].encode())
        for line in secret.split(b"\n"):
            forms.append(line)
    return sorted(set(forms))


def write_script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def planted_env(tmp_path: Path, smi_body: str | None = None) -> dict:
    bin_dir = tmp_path / "bin"
    # A fake nvidia-smi that prints its whole environment and a credential URL.
    write_script(bin_dir / "nvidia-smi", smi_body or
                 f'echo "Driver Version: 580.95.05"\nenv\necho "proxy=https://bob:{URL_PASSWORD}@proxy.example:3128"\n')
    secret_dir = tmp_path / TOKEN / "lib"
    secret_dir.mkdir(parents=True)
    return clean_env(
        PATH=f"{bin_dir}:/usr/bin:/bin",
        CUDA_HOME=str(SYSTEM_CTK),
        HF_TOKEN=TOKEN,
        NVIDIA_API_KEY=TOKEN,
        AWS_SECRET_ACCESS_KEY=AWS_SECRET,
        DB_PASSWORD=PASSWORD,
        CUDA_AUTH_COOKIE=MULTILINE,
        PIP_INDEX_URL=f"https://alice:{URL_PASSWORD}@pypi.example.com/simple",
        HTTPS_PROXY=f"http://proxyuser:{URL_PASSWORD}@10.0.0.1:8080",
        LD_LIBRARY_PATH=f"{secret_dir}:/odd/\xe9dir".encode("latin-1") + b"\n:/x",
        CUDA_VISIBLE_DEVICES=b"0,\xff1",
    )


def make_bundle(tmp_path: Path, env: dict, *args: str) -> tuple[Path, subprocess.CompletedProcess]:
    target = tmp_path / "out" / "support.tar.gz"
    target.parent.mkdir(exist_ok=True)
    result = run(["--no-load", "bundle", "-o", str(target), *args], env=env, timeout=60)
    assert result.returncode in (0, 1), describe(result)
    assert result.stdout.decode().strip() == str(target)
    return target, result


def extract(bundle: Path, tmp_path: Path) -> dict[str, bytes]:
    """Every member, read through Python's tarfile (a real consumer of the format)."""
    members = {}
    with tarfile.open(bundle, "r:gz") as archive:
        for member in archive.getmembers():
            assert not member.name.startswith("/") and ".." not in member.name.split("/")
            if member.isfile():
                members[member.name] = archive.extractfile(member).read()
    return members


def test_planted_secrets_appear_nowhere_in_the_bundle(tmp_path):
    bundle, _ = make_bundle(tmp_path, planted_env(tmp_path))
    raw = bundle.read_bytes()
    members = extract(bundle, tmp_path)
    assert len(members) >= 10
    for form in secret_forms():
        assert form not in raw, f"raw archive contains {form!r}"
        for name, content in members.items():
            assert form not in content, f"{name} contains {form!r}"
    # The system tar reads it too.
    listing = subprocess.run(["tar", "-tzf", str(bundle)], capture_output=True, text=True, check=True).stdout
    assert "support/report.json" in listing.splitlines()


def test_the_manifest_lists_every_file_and_what_was_redacted(tmp_path):
    bundle, _ = make_bundle(tmp_path, planted_env(tmp_path))
    members = extract(bundle, tmp_path)
    manifest = json.loads(members["support/manifest.json"])
    listed = {entry["name"] for entry in manifest["files"]}
    assert {f"support/{name}" for name in listed} == set(members) - {"support/manifest.json"}
    for expected in ("report.json", "report.md", "report.html", "trace.txt", "evidence/environment.txt",
                     "evidence/nvidia-smi-q.txt", "evidence/ld-so-cache.txt", "evidence/python-packages.txt",
                     "evidence/os.txt"):
        assert expected in listed, expected
    assert all(entry["source"] for entry in manifest["files"])
    redaction = manifest["redaction"]
    assert {"HF_TOKEN", "NVIDIA_API_KEY", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "CUDA_AUTH_COOKIE"} <= set(
        redaction["withheld_variables"])
    assert redaction["replacements"]["url_credentials"] >= 3
    assert redaction["replacements"]["secret_values"] >= 3
    smi = next(entry for entry in manifest["files"] if entry["name"] == "evidence/nvidia-smi-q.txt")
    assert "exit 0" in smi["source"] and smi["redacted"]["secret_values"] >= 1
    assert "library" in manifest["never_included"]


def test_the_bundled_report_is_schema_valid_and_the_environment_listing_is_escaped(tmp_path):
    bundle, _ = make_bundle(tmp_path, planted_env(tmp_path))
    members = extract(bundle, tmp_path)
    report = json.loads(members["support/report.json"].decode("utf-8"))
    assert schema_errors(report) == []
    environment = members["support/evidence/environment.txt"].decode("utf-8")
    lines = dict(line.split("=", 1) for line in environment.splitlines() if not line.startswith("#"))
    assert lines["NVIDIA_API_KEY"] == "<redacted>"
    assert lines["CUDA_AUTH_COOKIE"] == "<redacted>"
    assert lines["PIP_INDEX_URL"] == "https://<redacted>@pypi.example.com/simple"
    assert lines["CUDA_VISIBLE_DEVICES"] == "0,\\xff1"
    assert lines["LD_LIBRARY_PATH"].endswith("/odd/\\xe9dir\\n:/x")
    assert "<redacted:HF_TOKEN>" in lines["LD_LIBRARY_PATH"] or "<redacted:NVIDIA_API_KEY>" in lines["LD_LIBRARY_PATH"]
    for name in ("report.md", "report.html", "trace.txt"):
        members[f"support/{name}"].decode("utf-8")  # valid UTF-8


def test_redact_paths_hides_the_home_directory_and_user_name(tmp_path):
    home = tmp_path / "home" / "zaphod"
    (home / "venv").mkdir(parents=True)
    env = planted_env(tmp_path)
    env.update(HOME=str(home), USER="zaphod", LOGNAME="zaphod", VIRTUAL_ENV=str(home / "venv"))
    bundle, _ = make_bundle(tmp_path, env)
    assert any(b"zaphod" in content for content in extract(bundle, tmp_path).values())
    bundle.unlink()
    bundle, _ = make_bundle(tmp_path, env, "--redact-paths")
    for name, content in extract(bundle, tmp_path).items():
        assert b"zaphod" not in content, name
    manifest = json.loads(extract(bundle, tmp_path)["support/manifest.json"])
    assert manifest["redaction"]["paths_redacted"] is True


def test_a_hanging_nvidia_smi_is_killed_and_the_bundle_is_still_written(tmp_path):
    env = planted_env(tmp_path, smi_body='echo "partial output"\nsleep 60\n')
    bundle, _ = make_bundle(tmp_path, env, "--smi-timeout", "1")
    members = extract(bundle, tmp_path)
    assert b"partial output" in members["support/evidence/nvidia-smi-q.txt"]
    manifest = json.loads(members["support/manifest.json"])
    smi = next(entry for entry in manifest["files"] if entry["name"] == "evidence/nvidia-smi-q.txt")
    assert "timed out after 1.0 s" in smi["source"]


def test_without_nvidia_smi_the_manifest_says_so(tmp_path):
    env = planted_env(tmp_path)
    env["PATH"] = "/usr/bin:/bin"
    if any((Path(d) / "nvidia-smi").exists() for d in ("/usr/bin", "/bin")):
        pytest.skip("this machine has a real nvidia-smi")
    bundle, _ = make_bundle(tmp_path, env)
    manifest = json.loads(extract(bundle, tmp_path)["support/manifest.json"])
    assert {"what": "nvidia-smi -q", "why": "nvidia-smi is not on PATH"} in manifest["not_collected"]


@pytest.mark.parametrize("kind", ["missing-directory", "missing-directory/", "under-a-file"])
def test_an_unwritable_target_is_a_usage_error_and_leaves_nothing_behind(kind, tmp_path):
    parent = tmp_path / "target"
    parent.mkdir()
    if kind == "missing-directory":
        target = parent / "no" / "such" / "x.tar.gz"
    elif kind == "missing-directory/":
        target = str(parent / "no-such-dir") + "/"
    else:
        (parent / "file").write_text("x")
        target = parent / "file" / "x.tar.gz"
    result = run(["--no-load", "bundle", "-o", str(target)], env=clean_env(), timeout=60)
    assert result.returncode == 2, describe(result)
    assert result.stdout == b""
    assert str(target).encode() in result.stderr and b"nothing was written" in result.stderr
    left = sorted(p.relative_to(parent).as_posix() for p in parent.rglob("*"))
    assert left == {"missing-directory": [], "missing-directory/": [], "under-a-file": ["file"]}[kind]


@pytest.mark.parametrize("spelling", ["dir/", "dir"])
def test_a_directory_as_output_gets_the_default_name_inside_it(spelling, tmp_path):
    directory = tmp_path / "dir"
    directory.mkdir()
    result = run(["--no-load", "bundle", "-o", str(tmp_path / spelling)], env=clean_env(), cwd=tmp_path, timeout=60)
    assert result.returncode in (0, 1), describe(result)
    written = Path(result.stdout.decode().strip())
    assert written.parent == directory, written
    assert written.name.startswith("cudadiag-bundle-") and written.name.endswith(".tar.gz")
    assert [p.name for p in directory.iterdir()] == [written.name]


def test_the_default_name_goes_to_the_current_directory(tmp_path):
    result = run(["--no-load", "bundle"], env=clean_env(), cwd=tmp_path, timeout=60)
    assert result.returncode in (0, 1), describe(result)
    written = Path(result.stdout.decode().strip())
    assert written.parent == tmp_path
    assert written.name.startswith("cudadiag-bundle-") and written.name.endswith(".tar.gz")
    assert oct(written.stat().st_mode & 0o777) == oct(0o600)
    assert [p.name for p in tmp_path.iterdir()] == [written.name]


def test_bundle_json_output_and_exit_code_follow_the_report(tmp_path):
    target = tmp_path / "b.tar.gz"
    result = run(["--json", "--no-load", "bundle", "-o", str(target), "--require", "nvrtc>=99"], env=clean_env(),
                 timeout=60)
    assert result.returncode == 1, describe(result)
    out = json.loads(result.stdout)
    assert out["bundle"] == str(target)
    assert out["summary"]["exit_code"] == 1
    report = json.loads(extract(target, tmp_path)["b/report.json"])
    assert "policy.unmet" in [f["id"] for f in report["findings"]]
    assert report["policy"]["requirements"][0]["met"] is False
