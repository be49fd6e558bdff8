"""cudadiag from Python: which CUDA libraries this process will load, whether they agree, whether
the GPU works (docs/python.md).

    import cudadiag
    cudadiag.require("nvrtc>=13", "driver>=580")   # before `import torch`: RequirementError if unmet
    result = cudadiag.quick_check()                  # in-process, loads nothing; ok / warning / error
    cudadiag.find("nvrtc")                           # the file CUDA Python would load, or None
    cudadiag.report(verify=True)                     # the JSON report, as `cudadiag --json`

Every function calls libcudadiag.so (the C API) through ctypes; the library is loaded on the first
call (RTLD_LOCAL), not by `import cudadiag`. The keyword options are the C API's options JSON keys
(cudadiag.h, docs/api.md "Options"): components, python, ld_so_cache, fail_on, verify, self_test,
self_test_level, self_tests, device, context, exclusive, timeout_seconds, load_check, cache,
executable, environment. Calls are thread-safe, on free-threaded Python too."""

try:
    from cudadiag._version import __version__
except ImportError:  # a source tree, not an installed wheel
    __version__ = "0+unknown"

__all__ = [
    "Error",
    "Finding",
    "RequirementError",
    "Result",
    "__version__",
    "find",
    "library_version",
    "quick_check",
    "report",
    "require",
]


class Error(Exception):
    """A call the library refused: invalid options (also a ValueError then), or an internal error.

    `status` is the C API's cudadiag_status value."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class _OptionsError(Error, ValueError):
    pass


class Finding:
    """One finding: its stable dotted id (docs/findings.md), severity ("info", "warning" or "error"),
    a one-line message naming the files involved, and the remedy."""

    __slots__ = ("id", "severity", "message", "remedy")

    def __init__(self, id, severity, message, remedy):
        self.id = id
        self.severity = severity
        self.message = message
        self.remedy = remedy

    def __repr__(self):
        return "Finding(id=%r, severity=%r, message=%r)" % (self.id, self.severity, self.message)

    def __eq__(self, other):
        if not isinstance(other, Finding):
            return NotImplemented
        return (self.id, self.severity, self.message, self.remedy) == (
            other.id, other.severity, other.message, other.remedy)

    def __hash__(self):
        return hash((self.id, self.severity, self.message, self.remedy))


class Result:
    """What quick_check() found: the verdict ("ok", "warning" or "error"), the exit code `cudadiag`
    would give (0, or 1 with a finding at the fail_on severity), and the findings. True when the
    verdict is not "error". `json_text` is the report's JSON document, or a function returning it
    (the document is rendered only when json() asks)."""

    __slots__ = ("verdict", "exit_code", "findings", "_json")

    def __init__(self, verdict, exit_code, findings, json_text):
        self.verdict = verdict
        self.exit_code = exit_code
        self.findings = findings
        self._json = json_text

    def __bool__(self):
        return self.verdict != "error"

    def json(self):
        """The report as a dict (docs/schema/report.schema.json)."""
        import json

        if callable(self._json):
            self._json = self._json()
        return json.loads(self._json)

    def __repr__(self):
        return "Result(verdict=%r, exit_code=%r, findings=%r)" % (self.verdict, self.exit_code, self.findings)

    def __str__(self):
        lines = ["cudadiag: %s (%d finding%s)" % (self.verdict, len(self.findings),
                                                  "" if len(self.findings) == 1 else "s")]
        for finding in self.findings:
            lines.append("  [%s] %s: %s" % (finding.severity, finding.id, finding.message))
            if finding.remedy:
                lines.append("    remedy: %s" % finding.remedy)
        return "\n".join(lines)


class RequirementError(Exception):
    """require() found requirements unmet. `findings`: the policy.unmet finding of each unmet
    requirement, then the warning and error findings about the components those name (which say
    why); the message lists their messages and remedies. `result`: the whole Result."""

    def __init__(self, findings, result):
        lines = []
        for finding in findings:
            lines.append("[%s] %s" % (finding.id, finding.message))
            if finding.remedy:
                lines.append("  remedy: %s" % finding.remedy)
        super().__init__("\n".join(lines))
        self.findings = findings
        self.result = result


def _fail(native, function, status):
    message = native.text(native.library().cudadiag_last_error()) or ("%s failed (status %d)" % (function, status))
    if status == native.ERROR_INVALID_OPTIONS:
        return _OptionsError(message, status)
    return Error(message, status)


_executable = []  # the scripts-directory executable, looked up once: [path] or [None]


def _options_json(options, workers):
    """The options as JSON; with `workers` (verification or the self-test asked for), the wheel's
    own executable for them unless the options or CUDADIAG_EXECUTABLE name one."""
    import json

    if workers and "executable" not in options:
        import os

        if not os.environ.get("CUDADIAG_EXECUTABLE"):
            if not _executable:
                from cudadiag._find import find_cudadiag_bin

                try:
                    _executable.append(find_cudadiag_bin())
                except FileNotFoundError:
                    _executable.append(None)  # the library looks for the one installed with it, or says why not
            if _executable[0] is not None:
                options = dict(options, executable=_executable[0])
    return json.dumps(options)


class _Report:
    """A report handle, freed when the last Result that reads it is gone."""

    __slots__ = ("_lib", "_handle")

    def __init__(self, lib, handle):
        self._lib = lib
        self._handle = handle

    def json_text(self):
        from cudadiag import _native as native

        text = self._lib.cudadiag_report_json_str(self._handle)
        if text is None:
            raise _fail(native, "cudadiag_report_json_str", 2)
        return native.text(text)

    def __del__(self):
        self._lib.cudadiag_report_free(self._handle)


def _run(function, options, *arguments):
    """Calls the report-producing `function` (NULL options when there are none) and returns the Result."""
    import ctypes

    from cudadiag import _native as native

    lib = native.library()
    handle = ctypes.c_void_p()
    if options:
        status = lib.cudadiag_options_new(ctypes.byref(handle))
        if status != native.OK:
            raise _fail(native, "cudadiag_options_new", status)
    try:
        if options:
            workers = bool(options.get("verify") or options.get("self_test"))
            status = lib.cudadiag_options_from_json(handle, _options_json(options, workers).encode())
            if status != native.OK:
                raise _fail(native, "cudadiag_options_from_json", status)
        report = ctypes.c_void_p()
        status = getattr(lib, function)(handle, *arguments, ctypes.byref(report))
        if status != native.OK:
            raise _fail(native, function, status)
    finally:
        lib.cudadiag_options_free(handle)
    owner = _Report(lib, report)
    return _result(native, lib, owner)


def _result(native, lib, owner):
    import ctypes

    report = owner._handle

    def check(function, status):
        if status != native.OK:
            raise _fail(native, function, status)

    verdict = ctypes.c_int()
    exit_code = ctypes.c_int()
    count = ctypes.c_size_t()
    check("cudadiag_report_verdict", lib.cudadiag_report_verdict(report, ctypes.byref(verdict)))
    check("cudadiag_report_exit_code", lib.cudadiag_report_exit_code(report, ctypes.byref(exit_code)))
    check("cudadiag_report_finding_count", lib.cudadiag_report_finding_count(report, ctypes.byref(count)))
    findings = []
    for index in range(count.value):
        id_, message, remedy = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        severity = ctypes.c_int()
        check("cudadiag_report_finding_id", lib.cudadiag_report_finding_id(report, index, ctypes.byref(id_)))
        check("cudadiag_report_finding_severity",
              lib.cudadiag_report_finding_severity(report, index, ctypes.byref(severity)))
        check("cudadiag_report_finding_message",
              lib.cudadiag_report_finding_message(report, index, ctypes.byref(message)))
        check("cudadiag_report_finding_remedy",
              lib.cudadiag_report_finding_remedy(report, index, ctypes.byref(remedy)))
        findings.append(Finding(native.text(id_.value), native.SEVERITIES[severity.value],
                                native.text(message.value), native.text(remedy.value)))
    return Result(native.VERDICTS[verdict.value], exit_code.value, tuple(findings), owner.json_text)


def report(**options):
    """The full report as a dict, the document `cudadiag --json` prints (schema_version 1):
    discovery, plus verification (verify=True) and the GPU self-test (self_test=True), each in
    isolated worker processes. Raises Error (a ValueError) for an invalid option."""
    return _run("cudadiag_report_new", options).json()


def quick_check(**options):
    """The startup check: what this process has mapped and what it would load next, in this process,
    loading nothing and starting no process (a few ms the first time, a fraction of one when nothing
    changed). Its findings are the warnings and errors."""
    return _run("cudadiag_quick_check", options)


def require(*specs, **options):
    """Returns None when every requirement holds, else raises RequirementError. A spec is written as
    after `cudadiag --require` ("nvrtc>=13", "driver>=580", "cccl", "no-errors"; docs/manual.md,
    "CI gates"): the library parses and checks them (cudadiag_require) against the report the
    options ask for (discovery by default). A malformed spec raises Error (a ValueError)."""
    import ctypes

    array = (ctypes.c_char_p * max(len(specs), 1))(*[spec.encode() for spec in specs])
    result = _run("cudadiag_require", options, array, len(specs))
    unmet = [f for f in result.findings if f.id == "policy.unmet"]
    if not unmet:
        return None
    document_findings = result.json().get("findings", [])  # the same findings, in the same order
    named = set()
    for document_finding in document_findings:
        if document_finding.get("id") == "policy.unmet":
            named.update(document_finding.get("components", []))
    related = []
    for document_finding, finding in zip(document_findings, result.findings):
        if (finding.id != "policy.unmet" and finding.severity != "info"
                and named.intersection(document_finding.get("components", []))):
            related.append(finding)
    raise RequirementError(tuple(unmet + related), result)


def find(name, **options):
    """The path of component `name` (cuda-pathfinder's names: "nvrtc", "cublas", "cccl", "nvcc"):
    what CUDA Python would load, else what dlopen(SONAME) loads; for a header set its include
    directory. None when nothing is found. A name that is a library and a header set means the
    library (as `cudadiag find`). Whether it loads is in report()["components"]."""
    options = dict(options, components=[name])
    document = _run("cudadiag_report_new", options).json()
    order = {"dynamic_lib": 0, "binary": 1, "headers": 2}
    components = sorted(document.get("components", []), key=lambda c: order.get(c.get("kind"), 3))
    for component in components:
        for answer in ("selected", "loader"):
            choice = component.get(answer)
            if choice and choice.get("path"):
                return choice["path"]
        return None
    return None


def library_version():
    """The loaded libcudadiag's version ("0.1.0")."""
    from cudadiag import _native as native

    return native.text(native.library().cudadiag_version_string())
