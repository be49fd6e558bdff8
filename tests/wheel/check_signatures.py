#!/usr/bin/env python3
"""The Python package's ctypes signatures (python/cudadiag/_native.py, _SIGNATURES) against the C
header: every function it declares exists in cudadiag.h with the same number of parameters, and each
return and parameter type maps to the ctypes type declared; every declared function is exported by
the library.

    check_signatures.py include/cudadiag/cudadiag.h python/cudadiag LIBRARY
"""
import ctypes
import importlib.util
import re
import sys

# C type (spaces normalised, no parameter name) -> the ctypes type that passes it.
_SCALARS = {
    "void": None,
    "int": ctypes.c_int,
    "size_t": ctypes.c_size_t,
    "const char*": ctypes.c_char_p,
    "const char**": ctypes.POINTER(ctypes.c_char_p),
    "const char* const*": ctypes.POINTER(ctypes.c_char_p),
    "int*": ctypes.POINTER(ctypes.c_int),
    "size_t*": ctypes.POINTER(ctypes.c_size_t),
}
_ENUMS = ("cudadiag_status", "cudadiag_severity", "cudadiag_verdict", "cudadiag_log_level")
_HANDLES = ("cudadiag_options", "cudadiag_report")


def ctypes_for(c_type):
    """The ctypes type a C type is passed as."""
    c_type = re.sub(r"\s*\*", "*", " ".join(c_type.split()))
    c_type = c_type.replace("const char* const *", "const char* const*")
    if c_type in _SCALARS:
        return _SCALARS[c_type]
    bare = c_type.replace("const ", "")
    if bare in _ENUMS:
        return ctypes.c_int
    if bare.rstrip("*") in _ENUMS and bare.endswith("*"):
        return ctypes.POINTER(ctypes.c_int)
    if bare.rstrip("*") in _HANDLES:
        stars = len(bare) - len(bare.rstrip("*"))
        if stars == 1:
            return ctypes.c_void_p
        if stars == 2:
            return ctypes.POINTER(ctypes.c_void_p)
    raise ValueError("no ctypes mapping for C type '%s'" % c_type)


def declarations(header_text):
    """{name: (return C type, [parameter C types])} of every CUDADIAG_API function."""
    text = re.sub(r"/\*.*?\*/", " ", header_text, flags=re.S)
    found = {}
    for match in re.finditer(r"CUDADIAG_API\s+([^;(]*?)\b(cudadiag_\w+)\s*\(([^)]*)\)\s*;", text):
        returns, name, parameters = match.groups()
        params = []
        for parameter in parameters.split(","):
            parameter = " ".join(parameter.split())
            if parameter in ("void", ""):
                continue
            # Drop the parameter's name: the last identifier, unless the type is all there is.
            typed = re.match(r"(.*?[\s*])(\w+)$", parameter)
            params.append(typed.group(1).strip() if typed else parameter)
        found[name] = (returns.strip(), params)
    return found


def same(a, b):
    if a is None or b is None:
        return a is b
    return a == b or (getattr(a, "_type_", None) is not None and getattr(a, "_type_", None) == getattr(b, "_type_", None)
                      and issubclass(a, ctypes._Pointer) == issubclass(b, ctypes._Pointer))


def main():
    header, package, library = sys.argv[1:4]
    spec = importlib.util.spec_from_file_location("cudadiag_native", package + "/_native.py")
    native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(native)
    declared = declarations(open(header).read())
    lib = ctypes.CDLL(library, mode=ctypes.RTLD_LOCAL)
    errors = []
    for name, (restype, argtypes) in sorted(native._SIGNATURES.items()):
        if name not in declared:
            errors.append("%s: not in %s" % (name, header))
            continue
        c_returns, c_params = declared[name]
        if not same(restype, ctypes_for(c_returns)):
            errors.append("%s: returns %s in C, restype %r in Python" % (name, c_returns, restype))
        if len(c_params) != len(argtypes):
            errors.append("%s: %d parameters in C, %d argtypes" % (name, len(c_params), len(argtypes)))
        for index, (c_param, argtype) in enumerate(zip(c_params, argtypes)):
            if not same(argtype, ctypes_for(c_param)):
                errors.append("%s: parameter %d is %s in C, %r in Python" % (name, index, c_param, argtype))
        if not hasattr(lib, name):
            errors.append("%s: not exported by %s" % (name, library))
    for error in errors:
        print(error)
    print("%d functions checked against %s (%d declared there), %d mismatches"
          % (len(native._SIGNATURES), header, len(declared), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
