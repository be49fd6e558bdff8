#!/usr/bin/env python3
"""ARCHITECTURE.md stays level with the code: every path it names (src/..., tests/..., scripts/...,
with or without the file's suffix, as the map writes `src/core/output_file` for its .hpp/.cpp) must
exist, and every folder of src/ and tests/ must be named in it. Recipe templates (a path holding
NAME, KEY or a glob) are not paths. docs/performance.md holds the current figures only (at most
15 KB: the history lives in docs/performance-history.md).

    check_architecture.py SOURCE_DIR        exit 0 when level, 1 otherwise (each gap on a line)
"""
import re
import sys
from pathlib import Path

TOPS = "src|probes|cli|include|tests|scripts|docs|kernels|packaging|bench|fuzz|examples|cmake"
PATH = re.compile(rf"(?<![\w./-])((?:{TOPS})/[\w./*{{}}<>-]*)")
PERFORMANCE_LIMIT = 15 * 1024
SUFFIXES = ("", ".hpp", ".cpp", ".h", ".c", ".py", ".sh", ".md", ".toml", ".txt")


def main():
    root = Path(sys.argv[1]).resolve()
    text = (root / "ARCHITECTURE.md").read_text()
    problems, named = [], set()
    for match in PATH.finditer(text):
        path = match.group(1).rstrip(".,:;")
        if any(c in path for c in "*{}<>") or re.search(r"NAME|KEY", path):
            continue
        named.add(path.rstrip("/"))
        if not any((root / (path.rstrip("/") + suffix)).exists() for suffix in SUFFIXES):
            problems.append(f"ARCHITECTURE.md names {path}, which does not exist")
    for top in ("src", "tests"):
        for folder in sorted(p for p in (root / top).iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
            rel = f"{top}/{folder.name}"
            if rel not in named and f"`{rel}/" not in text:
                problems.append(f"{rel}/ is not named in ARCHITECTURE.md")
    performance = root / "docs" / "performance.md"
    if performance.stat().st_size > PERFORMANCE_LIMIT:
        problems.append(f"docs/performance.md is {performance.stat().st_size} bytes, over {PERFORMANCE_LIMIT}: "
                        "move what is not a current figure to docs/performance-history.md")
    print(f"{len(named)} paths named, {len(problems)} problems")
    print("\n".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
