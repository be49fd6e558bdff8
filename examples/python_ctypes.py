#!/usr/bin/env python3
"""cudadiag's C API from Python through ctypes: a startup check a Python service can run before it
imports torch, cupy or cuda.core. Nothing to compile; needs libcudadiag.so.0 (the cudadiag package).

    python_ctypes.py [--library PATH] [--options JSON]

Prints the verdict and the warnings and errors; exits 1 when CUDA is expected to fail in this
process, 0 otherwise (3 when a cudadiag call fails).
"""
import argparse
import ctypes
import json
import sys

OK = 0
VERDICTS = {0: "ok", 1: "warning", 2: "error"}


def load(path):
    """The library with the prototypes this script uses (cudadiag.h)."""
    lib = ctypes.CDLL(path)
    lib.cudadiag_version_string.restype = ctypes.c_char_p
    lib.cudadiag_last_error.restype = ctypes.c_char_p
    lib.cudadiag_options_new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cudadiag_options_from_json.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.cudadiag_options_free.argtypes = [ctypes.c_void_p]
    lib.cudadiag_options_free.restype = None
    lib.cudadiag_quick_check.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.cudadiag_report_json_str.argtypes = [ctypes.c_void_p]
    lib.cudadiag_report_json_str.restype = ctypes.c_char_p
    lib.cudadiag_report_verdict.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    lib.cudadiag_report_free.argtypes = [ctypes.c_void_p]
    lib.cudadiag_report_free.restype = None
    return lib


def quick_check(lib, options_json):
    """(verdict, report as a dict) from cudadiag_quick_check; raises RuntimeError on a failed call."""
    def check(status):
        if status != OK:  # the last error names the function and the reason
            raise RuntimeError(lib.cudadiag_last_error().decode())

    options = ctypes.c_void_p()
    report = ctypes.c_void_p()
    check(lib.cudadiag_options_new(ctypes.byref(options)))
    try:
        if options_json:
            check(lib.cudadiag_options_from_json(options, options_json.encode()))
        check(lib.cudadiag_quick_check(options, ctypes.byref(report)))
        verdict = ctypes.c_int()
        check(lib.cudadiag_report_verdict(report, ctypes.byref(verdict)))
        return VERDICTS[verdict.value], json.loads(lib.cudadiag_report_json_str(report).decode())
    finally:
        lib.cudadiag_report_free(report)  # NULL is fine
        lib.cudadiag_options_free(options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", default="libcudadiag.so.0", help="path or name of libcudadiag")
    parser.add_argument("--options", default="", help='options JSON, e.g. \'{"components": ["cuda"]}\'')
    args = parser.parse_args()
    lib = load(args.library)
    try:
        verdict, report = quick_check(lib, args.options)
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 3
    print(f"cudadiag {lib.cudadiag_version_string().decode()}: verdict {verdict}")
    for finding in report["findings"]:
        print(f"  {finding['severity']}: [{finding['id']}] {finding['message']}")
        print(f"    remedy: {finding['remedy']}")
    return 1 if verdict == "error" else 0


if __name__ == "__main__":
    sys.exit(main())
