"""The pytorch#134929 failure, reproduced with real wheels and predicted without loading anything.

The closure venv holds nvidia-cusparse-cu12 12.3.1.170 (its libcusparse.so.12 needs
__nvJitLink*_12_4, version libnvJitLink.so.12) and the nvJitLink 12.4.127 wheel it was built with;
closure-old holds nvJitLink 12.1.105. With closure-old's library directory on LD_LIBRARY_PATH, the
loader binds the old nvJitLink for cuSPARSE (LD_LIBRARY_PATH beats cuSPARSE's RUNPATH), and the real
dlopen fails. `cudadiag --no-load` must say so (lib.undefined_symbol naming the symbol, libcusparse
and both nvJitLink copies), and must not once the entry is gone. The real dlopen, in a child
process, is the judge of both.
"""

import json
import os
import subprocess
import tempfile

import cudadiag_harness as harness


def closure_setup():
    venv = harness.venv("closure")
    old_root = harness.venvs_root() / "closure-old"
    old_lib = old_root / "nvidia" / "nvjitlink" / "lib"
    if not (old_lib / "libnvJitLink.so.12").is_file():
        import pytest

        pytest.skip(f"{old_lib} missing: run scripts/make_test_venvs.sh {harness.venvs_root()}")
    site = venv.site_packages()
    cusparse = site / "nvidia" / "cusparse" / "lib" / "libcusparse.so.12"
    new_nvjitlink = site / "nvidia" / "nvjitlink" / "lib" / "libnvJitLink.so.12"
    return venv, old_lib, cusparse, new_nvjitlink


def real_dlopen_error(venv, library, env):
    """What ctypes (RTLD_NOW) says when it loads `library` by path in a fresh process; None if it loads."""
    child = ("import ctypes, sys\n"
             "try:\n    ctypes.CDLL(sys.argv[1])\nexcept OSError as e:\n    print(e)\n")
    out = subprocess.run([str(venv.python), "-c", child, str(library)], env=env, capture_output=True, text=True,
                         timeout=60, check=True)
    return out.stdout.strip() or None


def report(venv, ld_library_path):
    env = venv.activated_env()
    env.pop("LD_LIBRARY_PATH", None)
    if ld_library_path:
        env["LD_LIBRARY_PATH"] = str(ld_library_path)
    result = harness.run(["--json", "--no-load"], env=env)
    return json.loads(result.stdout), env


def undefined_symbol_findings(document):
    return [f for f in document["findings"] if f["id"] == "lib.undefined_symbol"]


def test_old_nvjitlink_on_ld_library_path_is_predicted_and_real():
    venv, old_lib, cusparse, new_nvjitlink = closure_setup()
    document, env = report(venv, old_lib)
    found = undefined_symbol_findings(document)
    assert len(found) == 1, [f["message"] for f in document["findings"]]
    finding = found[0]
    print("finding:", finding["message"], "\nremedy:", finding["remedy"])
    assert finding["severity"] == "error"
    assert "cusparse" in finding["components"]
    evidence = finding["evidence"]
    assert evidence["symbol"].startswith("__nvJitLink") and evidence["symbol"].endswith("_12_4")
    assert evidence["version"] == "libnvJitLink.so.12"
    assert os.path.realpath(evidence["needed_by"]) == os.path.realpath(cusparse)
    assert os.path.realpath(evidence["bound"]) == os.path.realpath(old_lib / "libnvJitLink.so.12")
    assert evidence["bound_via"] == "LD_LIBRARY_PATH"
    assert [os.path.realpath(p["path"]) for p in evidence["providers"]] == [os.path.realpath(new_nvjitlink)]
    for text in (str(old_lib), "libcusparse.so.12", str(new_nvjitlink), evidence["symbol"]):
        assert text in finding["message"], text
    assert f"remove {old_lib} from LD_LIBRARY_PATH" in finding["remedy"]

    real = real_dlopen_error(venv, cusparse, env)
    assert real is not None, "the real dlopen loaded libcusparse.so.12: the prediction is wrong"
    assert f"undefined symbol: {evidence['symbol']}, version libnvJitLink.so.12" in real
    assert evidence["symbol"] in evidence["symbols"]


def test_without_the_entry_the_finding_is_gone_and_the_library_loads():
    venv, _, cusparse, _ = closure_setup()
    document, env = report(venv, None)
    assert undefined_symbol_findings(document) == []
    closures = [c for comp in document["linkage"]["components"] if comp["name"] == "cusparse" for c in comp["closures"]]
    assert closures and all(c["loads"] for c in closures)
    assert real_dlopen_error(venv, cusparse, env) is None


def test_every_prediction_matches_the_real_loader():
    """scripts/check_closure_prediction.py: each closure loaded for real, the link map compared."""
    venv, old_lib, _, _ = closure_setup()
    for ld_library_path in (old_lib, None):
        document, env = report(venv, ld_library_path)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(document, handle)
        try:
            out = subprocess.run([str(venv.python), str(harness.SOURCE_DIR / "scripts" / "check_closure_prediction.py"),
                                  handle.name], env=env, capture_output=True, text=True, timeout=600)
        finally:
            os.unlink(handle.name)
        print(out.stdout)
        assert out.returncode == 0, out.stdout + out.stderr
        assert " 0 wrong" in out.stdout


def test_the_load_check_loads_every_closure_and_agrees():
    """Without --no-load, cudadiag loads every closure in a worker and compares the link map."""
    venv, old_lib, cusparse, _ = closure_setup()
    for ld_library_path in (old_lib, None):
        env = venv.activated_env()
        env.pop("LD_LIBRARY_PATH", None)
        if ld_library_path:
            env["LD_LIBRARY_PATH"] = str(ld_library_path)
        document = json.loads(harness.run(["--json"], env=env).stdout)
        assert document["linkage"]["load_check"]["ran"] is True
        closures = [(comp["name"], c) for comp in document["linkage"]["components"] for c in comp["closures"]]
        assert len(closures) >= 3
        for name, closure in closures:
            check = closure["check"]
            assert check is not None, name
            assert check["status"] == "ok", (name, check["detail"])
            assert check["agrees"], (name, closure["answers"], check["differences"])
            assert check["loads"] == closure["loads"], name
        ids = {f["id"] for f in document["findings"]}
        assert "lib.closure_mispredicted" not in ids and "lib.load_failed" not in ids
        failing = [c for name, c in closures if name == "cusparse" and not c["loads"]]
        if ld_library_path:
            assert failing, "the old nvJitLink on LD_LIBRARY_PATH must break a cuSPARSE closure"
            symbol = undefined_symbol_findings(document)[0]["evidence"]["symbol"]
            for closure in failing:
                assert f"undefined symbol: {symbol}" in closure["check"]["error"]
                assert os.path.realpath(closure["check"]["failed_at"]) == os.path.realpath(cusparse)
        else:
            assert not failing
