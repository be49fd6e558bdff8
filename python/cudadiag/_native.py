"""libcudadiag.so through ctypes: the C API of include/cudadiag/cudadiag.h, loaded RTLD_LOCAL on
first use (nothing of it enters the process's global symbol namespace, and loading it loads no
CUDA library). _SIGNATURES is checked against cudadiag.h by tests/wheel/test_signatures.py."""

import ctypes
import os
import threading

_int_p = ctypes.POINTER(ctypes.c_int)
_size_p = ctypes.POINTER(ctypes.c_size_t)
_handle_p = ctypes.POINTER(ctypes.c_void_p)
_string_p = ctypes.POINTER(ctypes.c_char_p)

# name: (restype, argtypes). Enums are C ints; handles are opaque pointers.
_SIGNATURES = {
    "cudadiag_version": (ctypes.c_int, []),
    "cudadiag_version_string": (ctypes.c_char_p, []),
    "cudadiag_last_error": (ctypes.c_char_p, []),
    "cudadiag_options_new": (ctypes.c_int, [_handle_p]),
    "cudadiag_options_free": (None, [ctypes.c_void_p]),
    "cudadiag_options_from_json": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "cudadiag_report_new": (ctypes.c_int, [ctypes.c_void_p, _handle_p]),
    "cudadiag_quick_check": (ctypes.c_int, [ctypes.c_void_p, _handle_p]),
    "cudadiag_require": (ctypes.c_int, [ctypes.c_void_p, _string_p, ctypes.c_size_t, _handle_p]),
    "cudadiag_report_free": (None, [ctypes.c_void_p]),
    "cudadiag_report_json_str": (ctypes.c_char_p, [ctypes.c_void_p]),
    "cudadiag_report_verdict": (ctypes.c_int, [ctypes.c_void_p, _int_p]),
    "cudadiag_report_exit_code": (ctypes.c_int, [ctypes.c_void_p, _int_p]),
    "cudadiag_report_finding_count": (ctypes.c_int, [ctypes.c_void_p, _size_p]),
    "cudadiag_report_finding_id": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, _string_p]),
    "cudadiag_report_finding_severity": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, _int_p]),
    "cudadiag_report_finding_message": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, _string_p]),
    "cudadiag_report_finding_remedy": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, _string_p]),
}

OK = 0
ERROR_INVALID_OPTIONS = 4
VERDICTS = ("ok", "warning", "error")
SEVERITIES = ("info", "warning", "error")

_lock = threading.Lock()
_library = None


def library_path():
    """The libcudadiag.so to load: $CUDADIAG_LIBRARY, else the one inside this package."""
    configured = os.environ.get("CUDADIAG_LIBRARY")
    if configured:
        return configured
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libcudadiag.so")


def library():
    """The loaded library, its functions typed (loaded once, by the first caller)."""
    global _library
    with _lock:
        if _library is None:
            loaded = ctypes.CDLL(library_path(), mode=os.RTLD_LOCAL | os.RTLD_NOW)
            for name, (restype, argtypes) in _SIGNATURES.items():
                function = getattr(loaded, name)
                function.restype = restype
                function.argtypes = argtypes
            _library = loaded
        return _library


def text(value):
    return value.decode("utf-8", "replace") if value is not None else ""
