"""Help that helps: `cudadiag explain ID` (the findings reference, from docs/findings.md), completion
scripts run by the real shells, usage errors with the `cudadiag: error:` prefix and a suggestion,
and subcommand help that lists the global options."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import SOURCE_DIR, clean_env, require_binary, run

FINDINGS_MD = SOURCE_DIR / "docs" / "findings.md"


def documented_ids() -> list[str]:
    return re.findall(r"^## `([^`]+)`", FINDINGS_MD.read_text(), re.MULTILINE)


def reference_section(finding_id: str) -> str:
    text = FINDINGS_MD.read_text()
    start = text.index(f"## `{finding_id}`")
    end = text.find("\n#", start + 1)
    return text[start:end if end != -1 else len(text)]


def words(text: str) -> list[str]:
    """The words of a text with Markdown marks and line breaks gone, for comparing prose."""
    text = re.sub(r"[`*\[\]]", "", text)
    text = re.sub(r"\]\(([^)]*)\)", r" (\1)", text)
    return text.split()


# ---------------------------------------------------------------------------------------------
# explain
# ---------------------------------------------------------------------------------------------


def test_explain_prints_every_documented_finding_as_in_the_reference():
    ids = documented_ids()
    assert len(ids) >= 20, ids
    for finding_id in ids:
        result = run(["explain", finding_id], env=clean_env())
        assert result.returncode == 0, (finding_id, result.stderr)
        text = result.stdout.decode()
        assert text.splitlines()[0] == finding_id
        assert max(len(line) for line in text.splitlines()) <= 80, text
        # Same words as docs/findings.md's section (the one source), in the same order.
        section = reference_section(finding_id)
        expected = words(re.sub(r"\[([^\]]*)\]\(([^)]*)\)", r"\1 (\2)", section.split("\n", 1)[1]))
        assert words(text)[1:] == expected, finding_id


def test_explain_of_an_unknown_id_exits_2_and_suggests_the_closest():
    result = run(["explain", "driver.stb"], env=clean_env())
    assert result.returncode == 2
    assert result.stdout == b""
    stderr = result.stderr.decode()
    assert stderr.startswith("cudadiag: error: "), stderr
    assert "driver.stub" in stderr, stderr


def test_explain_fits_the_width():
    text = run(["explain", "driver.stub", "--width", "40"], env=clean_env()).stdout.decode()
    assert max(len(line) for line in text.splitlines()) <= 40, text
    assert "Remedy" in text


# ---------------------------------------------------------------------------------------------
# Usage errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args,suggestion", [
    (["fnd", "nvrtc"], "find"),
    (["slftest"], "selftest"),
    (["--jsno"], "--json"),
    (["find", "nvrtc", "--explian"], "--explain"),
    (["selftest", "--levle", "full"], "--level"),
    (["--colour", "never"], "--color"),
])
def test_usage_errors_have_the_prefix_and_suggest_the_closest(args, suggestion):
    result = run(args, env=clean_env())
    assert result.returncode == 2, result
    assert result.stdout == b""
    stderr = result.stderr.decode()
    assert stderr.startswith("cudadiag: error: "), stderr
    assert f"did you mean `{suggestion}`?" in stderr, stderr


def test_an_unknown_subcommand_lists_the_subcommands():
    stderr = run(["frobnicate"], env=clean_env()).stderr.decode()
    assert stderr.startswith("cudadiag: error: "), stderr
    for command in ("find", "inspect", "selftest", "bundle", "diff", "fleet", "explain", "completion"):
        assert command in stderr, stderr
    assert "did you mean" not in stderr, "nothing is close to frobnicate"


@pytest.mark.parametrize("args", [["find"], ["--fail-on", "bogus"], ["--width", "5"], ["completion", "tcsh"]])
def test_every_usage_error_has_the_prefix(args):
    result = run(args, env=clean_env())
    assert result.returncode == 2
    assert result.stderr.decode().startswith("cudadiag: error: "), result.stderr


# ---------------------------------------------------------------------------------------------
# Help
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["find", "selftest", "bundle", "explain", "completion"])
def test_subcommand_help_lists_the_global_options(command):
    result = run([command, "--help"], env=clean_env(COLUMNS="80"))
    assert result.returncode == 0
    text = result.stdout.decode()
    assert f"Global options (before or after `{command}`):" in text, text
    globals_part = text[text.index("Global options"):]
    for option in ("--json", "--color", "--width", "--log-level", "-v,--verbose"):
        assert option in globals_part, option
    assert max(len(line) for line in text.splitlines()) <= 80, text


# ---------------------------------------------------------------------------------------------
# Completion, run by the shells themselves
# ---------------------------------------------------------------------------------------------


def bash_complete(script: Path, line: str) -> list[str]:
    """COMPREPLY of bash's programmable completion for `line` (the cursor at its end)."""
    program = f"""
source {script}
COMP_LINE={line!r}
read -r -a COMP_WORDS <<< "$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
_cudadiag
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    result = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_bash_completes_subcommands_options_components_and_ids(tmp_path):
    script = tmp_path / "cudadiag.bash"
    script.write_bytes(run(["completion", "bash"]).stdout)
    assert "selftest" in bash_complete(script, "cudadiag sel")
    assert bash_complete(script, "cudadiag f") == ["find", "fleet", "fix"]
    assert "--explain" in bash_complete(script, "cudadiag find --ex")
    assert "--json" in bash_complete(script, "cudadiag find --js"), "global options after a subcommand"
    assert set(bash_complete(script, "cudadiag find nv")) >= {"nvrtc", "nvJitLink", "nvml", "nvvm", "nvcc"}
    assert "driver.stub" in bash_complete(script, "cudadiag explain driver.")
    assert bash_complete(script, "cudadiag --color ") == ["auto", "always", "never"]
    assert bash_complete(script, "cudadiag completion ") == ["bash", "zsh", "fish"]


def test_zsh_loads_the_completion_script(tmp_path):
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed (scripts/install_dependencies.sh installs it)")
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_cudadiag").write_bytes(run(["completion", "zsh"]).stdout)
    check = subprocess.run([zsh, "-n", str(functions / "_cudadiag")], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    # compinit finds it on fpath and binds it to the command, as an installed vendor completion is.
    program = (f"fpath=({functions} $fpath); autoload -Uz compinit; compinit -u -D; "
               "print -r -- ${_comps[cudadiag]}")
    result = subprocess.run([zsh, "-f", "-c", program], capture_output=True, text=True, timeout=60,
                            env=clean_env(HOME=str(tmp_path)))
    assert result.stdout.strip() == "_cudadiag", result.stdout + result.stderr


def test_fish_completes_from_the_completion_script(tmp_path):
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed (scripts/install_dependencies.sh installs it)")
    script = tmp_path / "cudadiag.fish"
    script.write_bytes(run(["completion", "fish"]).stdout)

    def complete(line: str) -> list[str]:
        program = f"source {script}; complete --do-complete {line!r}"
        result = subprocess.run([fish, "--no-config", "-c", program], capture_output=True, text=True, timeout=60,
                                env=clean_env(HOME=str(tmp_path)))
        assert result.returncode == 0, result.stderr
        return [entry.split("\t")[0] for entry in result.stdout.splitlines()]

    assert "selftest" in complete("cudadiag sel")
    assert "--explain" in complete("cudadiag find --ex")
    assert "nvJitLink" in complete("cudadiag find nvJ")
    assert "driver.stub" in complete("cudadiag explain driver.s")
    assert set(complete("cudadiag --color ")) == {"auto", "always", "never"}
