"""cudadiag's PEP 440 versions and specifiers and PEP 508 markers against Python's `packaging`
(the reference implementation pip vendors), on generated cases: at least 10,000 (specifier,
version) pairs and 10,000 (marker, environment) pairs, plus normalisation and ordering. Every
disagreement is listed with the question, both answers and the packaging version."""

from __future__ import annotations

import json
import os
import random
import subprocess

import pytest

packaging = pytest.importorskip("packaging", reason="the test venv lacks packaging (scripts/make_test_venvs.sh)")
from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName  # noqa: E402
from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: E402
from packaging.version import InvalidVersion, Version  # noqa: E402

ORACLE = os.environ.get("CUDADIAG_PEP_ORACLE", "")
SEED = 20261203


def ask(questions: list[dict]) -> list[str]:
    if not ORACLE or not os.path.exists(ORACLE):
        pytest.skip(f"cudadiag_pep_oracle not built ({ORACLE!r})")
    text = "".join(json.dumps(q) + "\n" for q in questions)
    done = subprocess.run([ORACLE], input=text.encode(), capture_output=True, timeout=120, check=True)
    answers = done.stdout.decode().splitlines()
    assert len(answers) == len(questions)
    return answers


# --- generators: the shapes real distributions use, and the corners between them ---------------

def gen_version(rng: random.Random, messy: bool = False) -> str:
    release = ".".join(str(rng.choice([0, 0, 1, 2, 3, 9, 10, 12, 13, 86, 2025])) for _ in range(rng.randint(1, 4)))
    text = release
    if rng.random() < 0.05:
        text = f"{rng.randint(1, 2)}!" + text
    if rng.random() < 0.25:
        letter = rng.choice(["a", "b", "rc"] + (["alpha", "beta", "c", "pre", "preview", "RC"] if messy else []))
        sep = rng.choice(["", "", ".", "-", "_"]) if messy else ""
        text += f"{sep}{letter}{rng.randint(0, 3)}"
    if rng.random() < 0.2:
        if messy and rng.random() < 0.3:
            text += f"-{rng.randint(0, 3)}"
        else:
            text += rng.choice([".post", ".post", "post", "-post", ".rev", "r"] if messy else [".post"]) + str(rng.randint(0, 3))
    if rng.random() < 0.15:
        text += rng.choice([".dev", ".dev", "dev", "-dev"] if messy else [".dev"]) + str(rng.randint(0, 3))
    if rng.random() < 0.15:
        text += "+" + rng.choice(["cu130", "cu12", "ubuntu.1", "local-7", "abc.5", "1", "2.x"])
    if messy and rng.random() < 0.2:
        text = rng.choice(["v", "V", " "]) + text
    return text


def gen_specifier(rng: random.Random) -> str:
    clauses = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(["==", "==", "!=", "<", "<=", ">", ">=", "~=", "==="])
        version = gen_version(rng)
        if op in ("==", "!=") and rng.random() < 0.3:
            version = ".".join(version.split("+")[0].split("!")[-1].split(".")[:rng.randint(1, 3)])
            version = "".join(ch for ch in version if ch.isdigit() or ch == ".").strip(".") or "1"
            version += ".*"
        if op == "~=" and "." not in version.split("+")[0]:
            version = version.replace("+", ".0+", 1) if "+" in version else version + ".0"
        if op not in ("==", "!=", "===") and rng.random() < 0.8:
            version = version.split("+")[0]
        clauses.append(op + rng.choice(["", " "]) + version)
    return rng.choice([",", ", "]).join(clauses)


VERSION_VARIABLES = ["python_version", "python_full_version", "implementation_version", "platform_release"]
STRING_VARIABLES = ["os_name", "sys_platform", "platform_system", "platform_machine",
                    "platform_python_implementation", "implementation_name", "extra"]


def gen_environment(rng: random.Random) -> dict:
    minor = rng.choice([8, 9, 10, 11, 12, 13, 14])
    micro = rng.randint(0, 12)
    return {
        "python_version": f"3.{minor}",
        "python_full_version": f"3.{minor}.{micro}" + rng.choice(["", "", "", "rc1", "b2"]),
        "implementation_version": f"3.{minor}.{micro}",
        "platform_release": rng.choice(["6.1.0", "5.15.0", "6.8.0", "4.18.0"]),
        "os_name": rng.choice(["posix", "nt"]),
        "sys_platform": rng.choice(["linux", "win32", "darwin"]),
        "platform_system": rng.choice(["Linux", "Windows", "Darwin"]),
        "platform_machine": rng.choice(["x86_64", "aarch64", "AMD64", "arm64"]),
        "platform_python_implementation": rng.choice(["CPython", "PyPy"]),
        "implementation_name": rng.choice(["cpython", "pypy"]),
        "platform_version": "#1 SMP",
        "extra": rng.choice(["", "cuda", "CUDA_12", "cu13", "test.extra", "dev"]),
    }


def gen_comparison(rng: random.Random) -> str:
    quote = rng.choice(["'", '"'])
    if rng.random() < 0.55:
        variable = rng.choice(VERSION_VARIABLES)
        op = rng.choice(["<", "<=", "==", "!=", ">=", ">", "~=", "in", "not in"])
        value = rng.choice(["3", "3.8", "3.10", "3.12", "3.12.1", "3.13", "3.9.*", "6", "5.15", "3.12rc1", "linux"])
        if op == "~=" and "." not in value:
            value += ".0"
    else:
        variable = rng.choice(STRING_VARIABLES)
        op = rng.choice(["==", "==", "!=", "in", "not in", "<", ">=", "<="])
        value = rng.choice(["linux", "Linux", "posix", "x86_64", "CPython", "cpython", "win", "cuda", "Cuda",
                            "cu-13", "CUDA-12", "test_extra", "dev", "86"])
    left, right = variable, f"{quote}{value}{quote}"
    if rng.random() < 0.2:
        left, right = right, left
    return f"{left} {op} {right}"


def gen_marker(rng: random.Random, depth: int = 0) -> str:
    if depth < 3 and rng.random() < 0.35:
        joined = f" {rng.choice(['and', 'or'])} ".join(gen_marker(rng, depth + 1) for _ in range(rng.randint(2, 3)))
        return f"({joined})" if rng.random() < 0.5 else joined
    return gen_comparison(rng)


# --- the references -------------------------------------------------------------------------------

def packaging_normalize(text: str) -> str:
    try:
        return str(Version(text))
    except InvalidVersion:
        return "invalid"


def packaging_compare(a: str, b: str) -> str:
    try:
        va, vb = Version(a), Version(b)
    except InvalidVersion:
        return "invalid"
    return str((va > vb) - (va < vb))


def packaging_satisfies(version: str, spec: str) -> str:
    try:
        specifiers = SpecifierSet(spec)
    except InvalidSpecifier:
        return "invalid"
    return "true" if specifiers.contains(version, prereleases=True) else "false"


def packaging_marker(marker: str, env: dict) -> str:
    try:
        return "true" if Marker(marker).evaluate(env) else "false"
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return "error"


def check(kind: str, questions: list[dict], expected: list[str]) -> None:
    answers = ask(questions)
    wrong = [(q, a, e) for q, a, e in zip(questions, answers, expected) if a != e]
    detail = "\n".join(f"  {json.dumps(q)}: cudadiag {a!r}, packaging {e!r}" for q, a, e in wrong[:25])
    assert not wrong, (f"{kind}: {len(wrong)} of {len(questions)} disagree with packaging "
                       f"{packaging.__version__}:\n{detail}")
    print(f"{kind}: {len(questions)} cases agree with packaging {packaging.__version__}")


def test_versions_normalise_as_packaging_normalises():
    rng = random.Random(SEED)
    texts = [gen_version(rng, messy=True) for _ in range(4000)]
    texts += ["1.0", "v1.0", "1.0-1", "1.0.post", "1.0a", "1.0.dev", "1.0RC1", "1.0_rc_1", "1!2.0", "1.0+Ubuntu-1",
              "1.0.0.0", "01.02", " 1.0 ", "1.0.", "1..0", "1.0+", "+1", "abc", "", "1.0-", "13.0.88", "2025.3.1"]
    check("normalisation", [{"normalize": t} for t in texts], [packaging_normalize(t) for t in texts])


def test_versions_order_as_packaging_orders_them():
    rng = random.Random(SEED + 1)
    pairs = [(gen_version(rng), gen_version(rng)) for _ in range(5000)]
    pairs += [(v, v.replace(".0", ".0.0", 1)) for v, _ in pairs[:500]]
    check("ordering", [{"compare": list(p)} for p in pairs], [packaging_compare(a, b) for a, b in pairs])


def test_specifiers_agree_on_ten_thousand_cases():
    rng = random.Random(SEED + 2)
    cases = []
    for _ in range(12000):
        spec = gen_specifier(rng)
        # Half the versions are near the specifier's own (its prefix, with a suffix): the boundaries.
        version = gen_version(rng)
        if rng.random() < 0.5:
            base = spec.split(",")[0].lstrip("=!<>~ ").replace(".*", "").split("+")[0]
            version = base + rng.choice(["", ".0", ".1", "rc1", ".post1", ".dev0", "+cu130", "a1.post2"])
        cases.append({"version": version, "spec": spec})
    # The pins that matter here, from real framework METADATA.
    cases += [{"version": v, "spec": s} for v, s in [
        ("13.2.86", "==13.2.86.*"), ("13.2.86.1", "==13.2.86.*"), ("13.2.87", "==13.2.86.*"),
        ("9.26.0.51", "==9.26.0.51"), ("3.9.0", "~=3.9.0"), ("3.10.0", "~=3.9.0"), ("2.11.0+cu130", "==2.11.0"),
        ("12.9.86", ">=12.0,<13"), ("13.0.88", ">=12.0,<13"), ("13.0.0rc1", "<13"), ("13.0.0.dev0", "<13")]]
    check("specifiers", cases, [packaging_satisfies(c["version"], c["spec"]) for c in cases])


def test_markers_agree_on_ten_thousand_cases():
    rng = random.Random(SEED + 3)
    cases = [{"marker": gen_marker(rng), "env": gen_environment(rng)} for _ in range(10000)]
    cases += [{"marker": m, "env": gen_environment(rng)} for m in [
        'platform_system == "Linux" and platform_machine == "x86_64"', 'extra == "CUDA"',
        'python_version >= "3.10" and extra == "cu13"', '"linux" in sys_platform', 'python_version ~= "3.9"',
        "os_name == 'posix' or (python_version < '3.9')", 'python_version == "3.*"', 'platform_release >= "6"',
        'extra ~= "cuda"', 'python_version', 'python_version >= "3.10" and', 'nosuch == "1"', "(((os_name == 'nt')))"]]
    check("markers", cases, [packaging_marker(c["marker"], c["env"]) for c in cases])
