#!/usr/bin/env python3
"""The frameworks' predicted loads against the real ones: for each framework in a cudadiag report's
`linkage.frameworks` (torch's libtorch_cuda.so with what `import torch` preloads, JAX's PJRT
plugin), import the framework in a fresh interpreter of the environment, read /proc/self/maps, and
compare every CUDA library the prediction holds (objects with a catalog `component`) with the file
the process really mapped under that name.

    python scripts/check_framework_loads.py REPORT.json   (run with the environment's python)

Prints one line per library: "same", "another file" (the prediction is wrong), "not mapped"
(predicted but absent: wrong too, unless the framework was not importable), and the CUDA libraries
the process mapped that the prediction does not hold ("also mapped": what the framework dlopens
later by itself, e.g. nvrtc, which no DT_NEEDED predicts). Exit 1 when a prediction is wrong.
"""

import json
import os
import re
import subprocess
import sys

IMPORTS = {
    "torch": "import torch; torch.cuda.is_available()",
    "jax": "import jax; jax.devices()",
}

MAPS = "\nprint('MAPS-BEGIN'); print(open('/proc/self/maps').read())"


def mapped_files(statement):
    done = subprocess.run([sys.executable, "-c", statement + MAPS], capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or "MAPS-BEGIN" not in done.stdout:
        return None, done.stderr[-800:]
    files = set()
    for line in done.stdout.split("MAPS-BEGIN", 1)[1].splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/") and ".so" in parts[5]:
            files.add(parts[5].strip())
    return files, ""


def stem(path):
    name = os.path.basename(path)
    match = re.match(r"(.*?\.so)", name)
    return match.group(1) if match else name


def main():
    report = json.load(open(sys.argv[1]))
    wrong = 0
    for framework in report["linkage"]["frameworks"]:
        key = "torch" if framework["framework"] == "torch" else "jax"
        print(f"== {framework['framework']} {framework['version']}: predicted "
              f"{'loads' if framework['loads'] else 'fails'}; importing with: {IMPORTS[key]}")
        files, error = mapped_files(IMPORTS[key])
        if files is None:
            print(f"   import failed: {error}")
            wrong += 0 if not framework["loads"] else 1
            continue
        by_stem = {}
        for path in files:
            by_stem.setdefault(stem(path), set()).add(os.path.realpath(path))
        predicted_stems = set()
        for obj in framework["closure"]["objects"]:
            if not obj["component"]:
                continue
            predicted_stems.add(stem(obj["realpath"]))
            real = by_stem.get(stem(obj["realpath"]), set())
            if obj["realpath"] in real:
                verdict = "same"
            elif real:
                verdict = "another file: " + ", ".join(sorted(real))
                wrong += 1
            else:
                verdict = "not mapped"
                wrong += 1
            print(f"   {obj['component']:<12} {verdict:<12} {obj['realpath']}")
        also = sorted(p for s, paths in by_stem.items() for p in paths
                      if s not in predicted_stems and re.search(r"/(nvidia|cuda)[^ ]*/lib", p))
        for path in also:
            print(f"   also mapped  {path}")
    print(f"wrong predictions: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
