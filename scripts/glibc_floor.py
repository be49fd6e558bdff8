#!/usr/bin/env python3
"""The newest glibc (and libstdc++) symbol versions each ELF file needs, from `objdump -T`.

    scripts/glibc_floor.py FILE...                       per file: the newest GLIBC_, GLIBCXX_ and
                                                         CXXABI_ versions and the symbols that need them
    scripts/glibc_floor.py --max-glibc 2.17 FILE...      exit 1 when a file needs a newer GLIBC_
    scripts/glibc_floor.py --forbid NAME[@VER] FILE...   exit 1 when a file imports NAME (at VER)

A wheel's manylinux tag can be no lower than the newest GLIBC_ version its files need (auditwheel
reads the same versions); this names the symbols that set it.
"""
import argparse
import re
import subprocess
import sys

# "0000000000000000      DF *UND*  0000000000000000 (GLIBC_2.34) posix_spawn_..." and, for
# binutils that print it so, "... GLIBC_2.34  posix_spawn_...".
_LINE = re.compile(r"\*UND\*\s+\S+\s+\(?(?P<version>(GLIBC|GLIBCXX|CXXABI)_[0-9.]+)\)?\s+(?P<name>\S+)")


def version_key(text):
    return tuple(int(part) for part in text.split("_", 1)[1].split(".") if part)


def needed(path):
    """{family: {version: [symbols]}} of the versioned undefined symbols of `path`."""
    out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        match = _LINE.search(line)
        if match:
            version = match.group("version")
            family = version.split("_", 1)[0]
            found.setdefault(family, {}).setdefault(version, []).append(match.group("name"))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-glibc", help="fail when a file needs a GLIBC_ version above this (2.17)")
    parser.add_argument("--forbid", action="append", default=[], metavar="NAME[@VERSION]",
                        help="fail when a file imports NAME (at VERSION, e.g. hypot@GLIBC_2.35)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    failed = False
    for path in args.files:
        found = needed(path)
        print(path)
        for family in ("GLIBC", "GLIBCXX", "CXXABI"):
            versions = found.get(family, {})
            if not versions:
                print(f"  {family}: none")
                continue
            newest = max(versions, key=version_key)
            print(f"  {family}: {newest} ({', '.join(sorted(set(versions[newest])))})")
        glibc = found.get("GLIBC", {})
        if args.max_glibc and glibc:
            limit = version_key("GLIBC_" + args.max_glibc)
            above = sorted((v for v in glibc if version_key(v) > limit), key=version_key)
            for version in above:
                print(f"  above GLIBC_{args.max_glibc}: {version}: {', '.join(sorted(set(glibc[version])))}")
                failed = True
        for forbidden in args.forbid:
            name, _, version = forbidden.partition("@")
            for family in found.values():
                for have_version, names in family.items():
                    if name in names and (not version or version == have_version):
                        print(f"  imports {name}@{have_version}, which --forbid names")
                        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
