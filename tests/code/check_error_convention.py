#!/usr/bin/env python3
"""One error convention, checked: in the product's sources (src/, probes/, cli/, include/), a
function that can fail returns Expected<T, E> (src/core/expected.hpp) and statuses are enums whose
names only the codecs spell. Three searches, each printed with its hits:

  1. optional<Error> anywhere: an error is returned as Expected<void> (or Expected<T>), never as
     an optional Error;
  2. a std::string& that is not const, unless its name is one of BUFFER_NAMES: an error is
     returned, never written into an out-parameter, whatever the parameter is called;
  3. a status compared with or assigned a string literal (`status == "ok"`, `status != "…"`,
     `status = "…"`), outside CODEC_FILES: rules and renderers compare enums.

    check_error_convention.py SOURCE_DIR

Exit status: 0 when the three searches find nothing, 1 otherwise (also when a CODEC_FILES entry
no longer exists: the list stays exact).
"""
import re
import sys
from pathlib import Path

FOLDERS = ("src", "probes", "cli", "include")
SUFFIXES = {".c", ".cpp", ".h", ".hpp", ".in"}

OPTIONAL_ERROR = re.compile(r"optional<(core::)?Error>")
STRING_REFERENCE = re.compile(r"(?<!const )std::string ?& ?(\w+)")
STATUS_STRING = re.compile(r'status (==|!=) "|status = "')

# Non-const std::string& names that are buffers a function appends to or fills with its value,
# never with an error.
BUFFER_NAMES = {
    "out": "text appended to (renderers, JSON writers, the ld.so.cache writer) or a value read out",
    "m_out": "JsonStream's and the JSON writer's output buffer, held by reference",
    "text": "text edited in place (redaction) or parsed in place (the fleet's report reader)",
    "key": "a cache key built field by field (the quick check's key)",
    "content": "a file's content read into the caller's string (pyenv shims, bundle evidence)",
}

# The files that turn statuses into wire text and back; only they may hold a status as a string
# and compare it with a literal. Each name's table (to_string / parse_*) sits beside its enum.
CODEC_FILES = {
    "src/selftest/selftest_codec.cpp": "the self-test's wire codec: test results as JSON records",
    "src/verify/facts_codec.cpp": "verification's wire codec: each probe's typed facts as JSON",
    "src/report/json_report.cpp": "the JSON report's writer",
    "src/report/selftest_json.cpp": "the JSON report's selftest object",
    "src/linkage/linkage_json.cpp": "the JSON report's linkage section",
}


def sources(root):
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                yield path


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = Path(sys.argv[1]).resolve()
    problems = []
    for name in sorted(CODEC_FILES):
        if not (root / name).is_file():
            problems.append(f"{name}: listed in CODEC_FILES but does not exist")
    files = 0
    for path in sources(root):
        files += 1
        relative = path.relative_to(root).as_posix()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            code = line.split("//", 1)[0]
            if OPTIONAL_ERROR.search(code):
                problems.append(f"{relative}:{number}: optional<Error> (return Expected<void>): {line.strip()}")
            for match in STRING_REFERENCE.finditer(code):
                if match.group(1) not in BUFFER_NAMES:
                    problems.append(f"{relative}:{number}: std::string& {match.group(1)} is an out-parameter "
                                    f"(return Expected<T> instead): {line.strip()}")
            if STATUS_STRING.search(code) and relative not in CODEC_FILES:
                problems.append(f"{relative}:{number}: a status as a string outside the codecs "
                                f"(compare the enum): {line.strip()}")
    print(f"{files} files; {len(problems)} problems")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
