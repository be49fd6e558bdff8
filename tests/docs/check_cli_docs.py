#!/usr/bin/env python3
"""The documentation cannot drift from the CLI: every option that `cudadiag --help` and each
subcommand's `--help` print must appear in the man page (docs/cudadiag.1) and in docs/manual.md,
and every subcommand in README.md too. The lists come from the binary's own help, so a new option
or subcommand fails this test until it is documented.

In the other direction, every option the man page names, and every option in the first column of a
docs/manual.md table, must be one the CLI has (a renamed or removed option fails too).

    check_cli_docs.py CUDADIAG SOURCE_DIR

Exit status: 0 when the documents agree with the help, 1 otherwise (each gap on its own line).
"""
import re
import subprocess
import sys
from pathlib import Path

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
# Another program's command line within a line: a launcher's (srun, sbatch) up to the cudadiag it
# runs; kubectl's and scontrol's up to a pipe or the line's end.
FOREIGN_COMMAND = re.compile(r"\b(?:srun|sbatch)\b[^|\n]*?(?=\bcudadiag\b|\||$)|\b(?:kubectl|scontrol)\b[^|\n]*",
                             re.MULTILINE)


def run_help(binary, *args):
    """The help text of `cudadiag ARGS --help`, which must exit 0."""
    result = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        sys.exit(f"{' '.join([binary, *args, '--help'])} exited {result.returncode}:\n{result.stderr}")
    return result.stdout


def parse_help(text):
    """(options, subcommands) of one CLI11 help text: the first column of its "Options:" and
    "Subcommands:" sections ("-v,--verbose" gives both spellings). A subcommand's "Global options"
    section lists the top level's options again and is not read."""
    options, subcommands = [], []
    section = None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            section = line.rstrip(":").strip().lower()
            continue
        fields = line.split()
        # An entry starts two columns in; deeper lines continue a wrapped description.
        if not fields or len(line) - len(line.lstrip(" ")) != 2:
            continue
        first = fields[0]
        if section == "options" and first.startswith("-"):
            options += [name for name in first.split(",") if name.startswith("-")]
        elif section == "subcommands" and not first.startswith("-"):
            subcommands.append(first)
    return options, subcommands


def roff_text(path):
    """The man page as plain text: font escapes dropped, \\- read as -."""
    text = path.read_text()
    text = re.sub(r"\\f[BIRP]", "", text)
    text = text.replace("\\-", "-").replace("\\~", " ").replace("\\(em", "-")
    return text


def has_option(text, option):
    return re.search(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text) is not None


def has_command(text, command):
    return re.search(r"cudadiag\s+" + re.escape(command) + r"(?![\w-])", text) is not None


def manual_table_options(text):
    """Options in the first column of the manual's tables (rows like "| `--level quick|full` | ...")."""
    found = set()
    for line in text.splitlines():
        if not line.startswith("| `-"):
            continue
        first_cell = re.split(r"(?<!\\)\|", line)[1]
        for code in re.findall(r"`([^`]*)`", first_cell):
            match = OPTION.match(code)
            if match:
                found.add(match.group(1))
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, source = sys.argv[1], Path(sys.argv[2])
    global_options, subcommands = parse_help(run_help(binary))
    if not global_options or not subcommands:
        sys.exit("could not read options and subcommands from `cudadiag --help`; has its format changed?")
    options = {option: "cudadiag" for option in global_options}
    for command in subcommands:
        command_options, _ = parse_help(run_help(binary, command))
        for option in command_options:
            options.setdefault(option, f"cudadiag {command}")

    documents = {
        "docs/cudadiag.1": roff_text(source / "docs/cudadiag.1"),
        "docs/manual.md": (source / "docs/manual.md").read_text(),
    }
    readme = (source / "README.md").read_text()
    problems = []
    for option, where in sorted(options.items()):
        for name, text in documents.items():
            if not has_option(text, option):
                problems.append(f"{name}: option {option} (of `{where}`) is not documented")
    for command in subcommands:
        for name, text in {**documents, "README.md": readme}.items():
            if not has_command(text, command):
                problems.append(f"{name}: subcommand `cudadiag {command}` is not documented")

    # The other direction: what the documents name must exist (options of the other programs in a
    # recipe — `srun --label ... cudadiag --json`, `kubectl logs --prefix | cudadiag fleet -` — are theirs).
    man_own = FOREIGN_COMMAND.sub("", documents["docs/cudadiag.1"])
    man_options = {m.group(1) for m in re.finditer(r"(?<![\w-])(--[A-Za-z][\w-]*)", man_own)}
    for option in sorted(man_options - set(options)):
        problems.append(f"docs/cudadiag.1: names {option}, which no `cudadiag ... --help` lists")
    for option in sorted(manual_table_options(documents["docs/manual.md"]) - set(options)):
        problems.append(f"docs/manual.md: an option table names {option}, which no `cudadiag ... --help` lists")

    if problems:
        print("\n".join(problems))
        print(f"\n{len(problems)} gap(s) between the CLI's help and its documentation "
              "(CONTRIBUTING.md: 'Keeping the docs true').")
        return 1
    print(f"{len(options)} options of {len(subcommands) + 1} commands documented in "
          f"{', '.join(documents)}; {len(subcommands)} subcommands in README.md too")
    return 0


if __name__ == "__main__":
    sys.exit(main())
