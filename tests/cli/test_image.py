"""--image REF (issue 48): an OCI image layout directory, a `docker save` archive (.tar, .tar.gz) or
an unpacked root file system, read as --root reads a directory: the layers applied in order with
whiteouts and opaque directories, the config's Env as the environment, hostile archives refused
with exit 2 naming the member. The images are built by tests/cli/image_builder.py."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import image_builder as ib
from cudadiag_harness import clean_env, compile_shared_library, component, describe, parse_report, run

TARGET = "targets/x86_64-linux/lib" if os.uname().machine != "aarch64" else "targets/sbsa-linux/lib"
CUDA = f"usr/local/cuda-12.8/{TARGET}"


@pytest.fixture(scope="module")
def elf_library(tmp_path_factory) -> bytes:
    """A shared object named libcudart.so.12 that needs nothing (-nostdlib): an image without a libc
    then has complete closures."""
    directory = tmp_path_factory.mktemp("elf")
    source = directory / "lib.c"
    source.write_text("int cudadiag_test_placeholder(void) { return 0; }\n")
    output = directory / "libcudart.so.12"
    for compiler in [c for c in (os.environ.get("CC"), "cc", "gcc", "clang") if c and shutil.which(c)]:
        done = subprocess.run([compiler, "-shared", "-fPIC", "-nostdlib", "-Wl,-soname,libcudart.so.12", "-o",
                               str(output), str(source)], capture_output=True, timeout=60, check=False)
        if done.returncode == 0:
            return output.read_bytes()
    pytest.skip("no C compiler builds a -nostdlib shared object here")


def toolkit_image(elf: bytes, **kwargs) -> ib.Image:
    """Layer 1: CUDA 12.8's cudart under /usr/local/cuda-12.8 (/usr/local/cuda an absolute link to it),
    an old NVRTC in /opt/old and two files in /opt/stale. Layer 2: /opt/old whited out, /opt/stale made
    opaque with one new file."""
    base = [
        ib.directory("usr/"), ib.directory("usr/local/"),
        ib.file(f"{CUDA}/libcudart.so.12.8.90", elf, mode=0o755),
        ib.symlink(f"{CUDA}/libcudart.so.12", "libcudart.so.12.8.90"),
        ib.symlink("usr/local/cuda-12.8/lib64", TARGET),
        ib.symlink("usr/local/cuda", "/usr/local/cuda-12.8"),
        ib.file("opt/old/libnvrtc.so.12", elf),
        ib.file("opt/stale/a.txt", "a"),
        ib.file("opt/stale/b.txt", "b"),
        ib.file("etc/os-release", 'PRETTY_NAME="Test Linux 1"\n'),
    ]
    upper = [
        ib.file("opt/.wh.old"),
        ib.file("opt/stale/.wh..wh..opq"),
        ib.file("opt/stale/c.txt", "c"),
        ib.hardlink("opt/stale/c-again.txt", "opt/stale/c.txt"),
    ]
    env = ["PATH=/usr/local/cuda/bin:/usr/bin:/bin", "CUDA_HOME=/usr/local/cuda",
           "LD_LIBRARY_PATH=/opt/old:/usr/local/cuda/lib64", "NVIDIA_VISIBLE_DEVICES=all"]
    return ib.Image([base, upper], env=env, **kwargs)


def report_of(reference, *args, allowed=(0, 1)) -> dict:
    result = run(["--json", "--image", reference, *args], env=clean_env(CUDA_HOME="/nowhere"))
    assert result.returncode in allowed, describe(result)
    return parse_report(result)


def check_toolkit_image(doc: dict, reference) -> None:
    image = doc["environment"]["image"]
    assert image["reference"] == str(reference)
    assert len(image["layers"]) == 2 and all(layer["digest"].startswith("sha256:") for layer in image["layers"])
    assert image["config"]["cmd"] == ["python3"]
    assert image["config"]["env"][1] == "CUDA_HOME=/usr/local/cuda"
    # The config's Env is the environment, not the caller's (CUDA_HOME=/nowhere).
    assert doc["environment"]["variables"]["CUDA_HOME"] == "/usr/local/cuda"
    assert doc["environment"]["cwd"] == "/"
    cudart = component(doc, "cudart")
    assert cudart["loader"]["found_via"] == "LD_LIBRARY_PATH", cudart["loader"]
    assert cudart["loader"]["realpath"] == f"/{CUDA}/libcudart.so.12.8.90", cudart["loader"]
    # /opt/old was whited out by the upper layer: its NVRTC is gone.
    assert component(doc, "nvrtc")["status"] == "not_found", component(doc, "nvrtc")
    assert doc["host"]["distro"] == "Test Linux 1", doc["host"]
    # The materialised tree is removed after the run.
    assert not Path(doc["environment"]["root"]).exists(), doc["environment"]["root"]
    assert "--image" in doc["verification"]["skipped_reason"]


def test_oci_layout(tmp_path, elf_library):
    layout = toolkit_image(elf_library).write_oci_layout(tmp_path / "layout")
    doc = report_of(layout)
    assert doc["environment"]["image"]["format"] == "oci-layout"
    assert doc["environment"]["image"]["manifest_digest"].startswith("sha256:")
    check_toolkit_image(doc, layout)


@pytest.mark.parametrize("compress", [False, True], ids=["tar", "tar.gz"])
def test_docker_save_archive(tmp_path, elf_library, compress):
    archive = toolkit_image(elf_library).write_docker_archive(tmp_path / ("app.tar.gz" if compress else "app.tar"),
                                                              compress=compress)
    doc = report_of(archive)
    assert doc["environment"]["image"]["format"] == "docker-archive"
    check_toolkit_image(doc, archive)


def test_uncompressed_layers_and_the_env_on_top(tmp_path, elf_library):
    layout = toolkit_image(elf_library, gzip_layers=False, working_dir="/workspace").write_oci_layout(tmp_path / "l")
    doc = report_of(layout, "--env", "LD_LIBRARY_PATH=")
    assert doc["environment"]["variables"]["LD_LIBRARY_PATH"] == ""
    assert doc["environment"]["variables"]["CUDA_HOME"] == "/usr/local/cuda"  # the image's, kept
    assert doc["environment"]["cwd"] == "/workspace"
    assert component(doc, "cudart")["loader"] is None or component(doc, "cudart")["loader"]["found_via"] != "LD_LIBRARY_PATH"


def test_whiteouts_and_opaque_directories_in_the_tree(tmp_path, elf_library):
    """What the tree holds, through a file the report shows: os-release from the top layer replaces
    the lower one; the opaque directory keeps only the upper layer's files (checked by a second
    image whose LD_LIBRARY_PATH points into it)."""
    lower = [ib.file("etc/os-release", 'PRETTY_NAME="Lower"\n'), ib.file("opt/lib/libnvrtc.so.12", elf_library)]
    upper = [ib.file("etc/os-release", 'PRETTY_NAME="Upper"\n'), ib.file("opt/lib/.wh..wh..opq"),
             ib.file("opt/lib/libnvJitLink.so.12", elf_library)]
    layout = ib.Image([lower, upper], env=["LD_LIBRARY_PATH=/opt/lib"]).write_oci_layout(tmp_path / "l")
    doc = report_of(layout)
    assert doc["host"]["distro"] == "Upper"
    assert component(doc, "nvrtc")["status"] == "not_found"
    assert component(doc, "nvJitLink")["candidates"], component(doc, "nvJitLink")


def test_a_rootfs_directory(tmp_path, elf_library):
    root = tmp_path / "rootfs"
    (root / CUDA).mkdir(parents=True)
    (root / CUDA / "libcudart.so.12").write_bytes(elf_library)
    doc = report_of(root, "--env", f"LD_LIBRARY_PATH=/{CUDA}")
    assert doc["environment"]["image"]["format"] == "rootfs"
    assert doc["environment"]["image"]["config"] is None
    assert component(doc, "cudart")["loader"]["path"] == f"/{CUDA}/libcudart.so.12"
    assert root.exists()  # never removed: not ours


HOSTILE = {
    "absolute": ([ib.file("/etc/cudadiag-test-escape", "x")], "/etc/cudadiag-test-escape", "absolute path"),
    "dotdot": ([ib.file("../../cudadiag-test-escape", "x")], "../../cudadiag-test-escape", "'..'"),
    "hardlink-out": ([ib.hardlink("etc/shadow-copy", "../../../etc/shadow")], "etc/shadow-copy", "hard link"),
    "symlink-out": ([ib.symlink("etc/up", "../../../../../etc")], "etc/up", "out of the image's root"),
    # The refusal names the pax record itself (Python's tarfile calls it ././@PaxHeader).
    "huge-header": ([ib.Member("big", "file", b"x", pax={"comment": "y" * (2 << 20)})], "././@PaxHeader",
                    "header record"),
    "symlink-then-write": ([ib.symlink("lib", "/tmp/cudadiag-escape-dir"), ib.file("lib/evil.so", "x")], None, None),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_layers_are_refused_naming_the_member(tmp_path, case):
    members, named, why = HOSTILE[case]
    layout = ib.Image([[ib.file("etc/os-release", "PRETTY_NAME=x\n")], members]).write_oci_layout(tmp_path / "l")
    result = run(["--json", "--image", layout], env=clean_env())
    stderr = result.stderr.decode()
    if named is None:
        # Writing through a link a layer made stays inside the tree: the file lands in the tree's
        # /tmp/cudadiag-escape-dir, never this machine's.
        assert result.returncode in (0, 1), describe(result)
        assert not Path("/tmp/cudadiag-escape-dir/evil.so").exists()
        return
    assert result.returncode == 2, describe(result)
    assert f"member {named}" in stderr and why in stderr and "layer 2 (sha256:" in stderr, stderr
    assert not Path("/etc/cudadiag-test-escape").exists()
    assert not (tmp_path.parent / "cudadiag-test-escape").exists()


def test_truncated_and_corrupt_archives(tmp_path, elf_library):
    archive = toolkit_image(elf_library).write_docker_archive(tmp_path / "app.tar")
    data = archive.read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: len(data) // 2])
    result = run(["--json", "--image", cut], env=clean_env())
    assert result.returncode == 2 and b"--image" in result.stderr, describe(result)
    garbage = tmp_path / "garbage.tar"
    garbage.write_bytes(b"\x00" * 100 + b"not a tar" * 100)
    result = run(["--json", "--image", garbage], env=clean_env())
    assert result.returncode == 2, describe(result)
    result = run(["--json", "--image", tmp_path / "layout-missing", "--root", tmp_path], env=clean_env())
    assert result.returncode == 2, describe(result)


# ---- container findings (--assume-driver, --assume-gpu) -----------------------------------------

NOTE_575 = {"Format": 1, "CUDA Version": "12.9", "Driver": [535, 550, 560, 565, 570, 575],
            "Device": [1, 2, 7, 8, 9, 10, 11, 12, 13, 14]}  # cuda-elf-header_test.go's 575.57.08 note


def compat_libcuda(tmp_path: Path, version: str, note: dict | None) -> bytes:
    """A libcuda.so.VERSION with the forward-compatibility ELF note the toolkit reads: a
    .note.cuda.fwd_compatibility section (SHT_NOTE), name "NVIDIA Corporation", a JSON descriptor."""
    source = "int cuInit(unsigned flags) { (void)flags; return 0; }\n"
    if note is not None:
        desc = __import__("json").dumps(note, separators=(",", ":"))
        escaped = desc.replace("\\", "\\\\").replace('"', '\\\\\\"')
        source += ('__asm__(".section .note.cuda.fwd_compatibility,\\"a\\",@note\\n"\n'
                   '".balign 4\\n.long 19\\n.long ' + str(len(desc) + 1) + '\\n.long 1\\n"\n'
                   '".asciz \\"NVIDIA Corporation\\"\\n.balign 4\\n"\n'
                   '".asciz \\"' + escaped + '\\"\\n.balign 4\\n.text\\n");\n')
    directory = tmp_path / f"compat-{version}"
    return compile_shared_library(directory, f"libcuda.so.{version}", source).read_bytes()


def run_image(layout, *args):
    result = run(["--json", "--image", layout, *args], env=clean_env())
    assert result.returncode in (0, 1), describe(result)
    return parse_report(result)


def findings_of(doc, finding_id):
    return [f for f in doc["findings"] if f["id"] == finding_id]


def test_requirement_unmet_quotes_the_toolkits_error(tmp_path):
    require = "cuda>=12.9 brand=tesla,driver>=535,driver<536 brand=tesla,driver>=550,driver<551"
    layout = ib.Image([[ib.file("etc/os-release", "PRETTY_NAME=x\n")]],
                      env=[f"NVIDIA_REQUIRE_CUDA={require}", "CUDA_VERSION=12.9.1",
                           "NVIDIA_DRIVER_CAPABILITIES=compute,utility"]).write_oci_layout(tmp_path / "l")
    doc = run_image(layout, "--assume-driver", "570.86.10")
    assert doc["environment"]["target_host"] == {"driver": "570.86.10", "cuda": "12.8", "brand": None,
                                                 "arch": None, "source": "--assume-driver"}
    [finding] = findings_of(doc, "container.requirement_unmet")
    assert finding["severity"] == "error"
    assert ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.9, please update your "
            "driver to a newer version, or use an earlier cuda container") in finding["message"]
    assert "NVIDIA_REQUIRE_CUDA" in finding["message"] and "config's Env" in finding["message"]
    assert finding["evidence"]["host_cuda"] == "12.8" and finding["evidence"]["mode"] == "legacy"
    # A host whose CUDA meets it, and a disabled check: none.
    assert not findings_of(run_image(layout, "--assume-driver", "575.57.08"), "container.requirement_unmet")
    assert not findings_of(run_image(layout, "--assume-driver", "570.86.10", "--env", "NVIDIA_DISABLE_REQUIRE=1"),
                           "container.requirement_unmet")
    # The 550 branch on a Tesla meets the second alternative.
    assert not findings_of(run_image(layout, "--assume-driver", "550.54.14", "--assume-gpu", "brand=tesla"),
                           "container.requirement_unmet")


def test_forward_compat_used_and_804_on_an_unlisted_brand(tmp_path):
    libcuda = compat_libcuda(tmp_path, "575.57.08", NOTE_575)
    layout = ib.Image([[ib.file("usr/local/cuda-12.9/compat/libcuda.so.575.57.08", libcuda, mode=0o755),
                        ib.symlink("usr/local/cuda-12.9/compat/libcuda.so.1", "libcuda.so.575.57.08"),
                        ib.symlink("usr/local/cuda", "/usr/local/cuda-12.9")]],
                      env=["NVIDIA_DRIVER_CAPABILITIES=compute,utility"]).write_oci_layout(tmp_path / "l")
    doc = run_image(layout, "--assume-driver", "570.86.10")
    [used] = findings_of(doc, "driver.forward_compat")
    assert "575.57.08" in used["message"] and "lists the host's branch 570" in used["message"], used
    assert used["evidence"]["layer"].startswith("sha256:")
    assert '"Driver":[535,550,560,565,570,575]' in used["evidence"]["note"]
    # GeForce (5) is not in the note's Device list: 804.
    doc = run_image(layout, "--assume-driver", "570.86.10", "--assume-gpu", "sm_89,brand=geforce")
    [failed] = findings_of(doc, "driver.init_failed")
    assert failed["evidence"]["code"] == 804 and failed["evidence"]["predicted"] is True
    assert "forward compatibility was attempted on non supported HW" in failed["message"]
    assert not findings_of(doc, "driver.forward_compat")
    # A host branch the note does not list (580): the toolkit leaves the compat copy out.
    doc = run_image(layout, "--assume-driver", "580.95.05")
    assert not findings_of(doc, "driver.forward_compat") and not findings_of(doc, "driver.init_failed")


def test_an_older_compat_forced_by_ld_so_conf_d_is_803(tmp_path):
    libcuda = compat_libcuda(tmp_path, "570.124.06", None)
    layout = ib.Image([[ib.file("usr/local/cuda-12.8/compat/libcuda.so.570.124.06", libcuda, mode=0o755),
                        ib.symlink("usr/local/cuda", "/usr/local/cuda-12.8"),
                        ib.file("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n")],
                       [ib.file("etc/ld.so.conf.d/cuda-compat.conf", "/usr/local/cuda-12.8/compat/\n")]],
                      env=["NVIDIA_DRIVER_CAPABILITIES=compute,utility"]).write_oci_layout(tmp_path / "l")
    doc = run_image(layout, "--assume-driver", "580.95.05")
    [failed] = findings_of(doc, "driver.init_failed")
    assert failed["evidence"]["code"] == 803, failed
    assert "system has unsupported display driver / cuda driver combination" in failed["message"]
    assert "/etc/ld.so.conf.d/cuda-compat.conf" in failed["message"] and "layer 1 of 2" in failed["message"]
    assert failed["repair"] == "fix_environment"


def test_driver_libraries_baked_into_the_image(tmp_path, elf_library):
    lib = "usr/lib/x86_64-linux-gnu" if os.uname().machine != "aarch64" else "usr/lib/aarch64-linux-gnu"
    layout = ib.Image([[ib.file("etc/os-release", "PRETTY_NAME=x\n")],
                       [ib.file(f"{lib}/libcuda.so.580.95.05", elf_library),
                        ib.symlink(f"{lib}/libcuda.so.1", "libcuda.so.580.95.05"),
                        ib.file(f"{lib}/libnvidia-ml.so.580.95.05", elf_library)]],
                      env=["NVIDIA_DRIVER_CAPABILITIES=compute,utility"]).write_oci_layout(tmp_path / "l")
    doc = run_image(layout, "--assume-driver", "570.86.10")
    [baked] = findings_of(doc, "driver.init_failed")
    assert "Driver/library version mismatch" in baked["message"] and "layer 2 of 2" in baked["message"]
    assert len(baked["evidence"]["files"]) == 2 and baked["repair"] == "reinstall_package"
    # The same version as the host's: nothing to say.
    assert not findings_of(run_image(layout, "--assume-driver", "580.95.05"), "driver.init_failed")


def test_capabilities_without_utility(tmp_path):
    layout = ib.Image([[ib.file("etc/os-release", "PRETTY_NAME=x\n")]],
                      env=["NVIDIA_DRIVER_CAPABILITIES=compute"]).write_oci_layout(tmp_path / "l")
    [finding] = findings_of(run_image(layout, "--assume-driver", "570.86.10"), "container.capability_missing")
    assert finding["severity"] == "warning" and "nvidia-smi: not found" in finding["message"]
    assert finding["evidence"]["missing"] == ["utility"]


def test_a_healthy_image_on_a_suitable_host_has_no_warning(tmp_path, elf_library):
    layout = ib.Image([[ib.file(f"{CUDA}/libcudart.so.12.8.90", elf_library),
                        ib.symlink(f"{CUDA}/libcudart.so.12", "libcudart.so.12.8.90"),
                        ib.symlink("usr/local/cuda-12.8/lib64", TARGET),
                        ib.symlink("usr/local/cuda", "/usr/local/cuda-12.8")]],
                      env=["NVIDIA_REQUIRE_CUDA=cuda>=12.8", "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
                           "LD_LIBRARY_PATH=/usr/local/cuda/lib64"]).write_oci_layout(tmp_path / "l")
    doc = run_image(layout, "--assume-driver", "570.86.10")
    problems = [(f["id"], f["severity"]) for f in doc["findings"] if f["severity"] != "info"]
    assert problems == [], doc["findings"]
