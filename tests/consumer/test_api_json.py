"""The JSON documents libcudadiag produces through its C API - quick_check, discovery, verification -
validate against docs/schema/report.schema.json and keep the invariants the CLI's documents keep.
The library is loaded with ctypes, as examples/python_ctypes.py does.

Environment: CUDADIAG_LIBRARY (libcudadiag.so), CUDADIAG_BIN (the worker), CUDADIAG_FIXTURES_DIR
(the fake driver), plus what tests/cli/cudadiag_harness.py reads (CUDADIAG_SCHEMA).
"""

import ctypes
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
import cudadiag_harness as harness  # noqa: E402

FAKE_DRIVER_DIR = Path(os.environ.get("CUDADIAG_FIXTURES_DIR", "")) / "fake-driver"


@pytest.fixture(scope="module")
def lib():
    path = os.environ.get("CUDADIAG_LIBRARY")
    if not path:
        pytest.skip("CUDADIAG_LIBRARY is not set")
    library = ctypes.CDLL(path)
    library.cudadiag_last_error.restype = ctypes.c_char_p
    library.cudadiag_options_new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    library.cudadiag_options_from_json.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    library.cudadiag_options_free.argtypes = [ctypes.c_void_p]
    library.cudadiag_options_free.restype = None
    for name in ("cudadiag_quick_check", "cudadiag_report_new"):
        getattr(library, name).argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    library.cudadiag_report_json_str.argtypes = [ctypes.c_void_p]
    library.cudadiag_report_json_str.restype = ctypes.c_char_p
    library.cudadiag_report_exit_code.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    library.cudadiag_report_free.argtypes = [ctypes.c_void_p]
    library.cudadiag_report_free.restype = None
    return library


def document(lib, function: str, options: dict) -> dict:
    """The JSON of `function`(options), checked against the schema, the invariants and the exit code."""
    handle = ctypes.c_void_p()
    report = ctypes.c_void_p()
    assert lib.cudadiag_options_new(ctypes.byref(handle)) == 0
    try:
        status = lib.cudadiag_options_from_json(handle, json.dumps(options).encode())
        assert status == 0, lib.cudadiag_last_error()
        assert getattr(lib, function)(handle, ctypes.byref(report)) == 0, lib.cudadiag_last_error()
        doc = json.loads(lib.cudadiag_report_json_str(report).decode("utf-8"))
        exit_code = ctypes.c_int()
        assert lib.cudadiag_report_exit_code(report, ctypes.byref(exit_code)) == 0
    finally:
        lib.cudadiag_report_free(report)
        lib.cudadiag_options_free(handle)
    problems = harness.schema_errors(doc) + harness.invariant_errors(doc)
    assert not problems, "\n".join(problems[:40])
    assert doc["summary"]["exit_code"] == exit_code.value
    return doc


def test_quick_check_with_defaults(lib):
    doc = document(lib, "cudadiag_quick_check", {})
    assert doc["verification"]["ran"] is False
    assert all(finding["severity"] != "info" for finding in doc["findings"])


def test_quick_check_with_the_stub_first_on_the_search_path(lib, tmp_path):
    stubs = tmp_path / "cuda" / "lib64" / "stubs"
    stubs.mkdir(parents=True)
    shutil.copy(FAKE_DRIVER_DIR / "libcuda.so.1", stubs / "libcuda.so.1")
    doc = document(lib, "cudadiag_quick_check", {"environment": {"LD_LIBRARY_PATH": str(stubs)}})
    assert "driver.stub" in harness.finding_ids(doc)
    assert doc["summary"]["status"] == "error"


def test_discovery_of_the_whole_catalog(lib):
    doc = document(lib, "cudadiag_report_new", {"fail_on": "warning"})
    assert len(doc["components"]) > 10


def test_verification_with_the_fake_driver(lib):
    doc = document(lib, "cudadiag_report_new", {
        "components": ["cuda", "nvrtc"],
        "verify": True,
        "executable": str(harness.require_binary()),
        "environment": {"LD_LIBRARY_PATH": str(FAKE_DRIVER_DIR), "CUDADIAG_FAKE_CUDA": "ok"},
    })
    assert doc["verification"]["ran"] is True
    assert [device["name"] for device in doc["devices"]] == ["NVIDIA H200 (fake 0)"]
