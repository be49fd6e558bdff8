#!/usr/bin/env python3
"""Layers are data, checked: every `#include "FOLDER/..."` in the product's sources (src/, probes/,
cli/, include/cudadiag/) must point at the including file's own folder or at a folder on an earlier
line of tests/code/layers.txt. Prints each include that runs up or sideways (file:line, the two
folders and their layers), every cycle among folders, and the folder graph's size.

    check_layers.py SOURCE_DIR

Exit status: 0 when every include runs down and there is no cycle, 1 otherwise.
"""
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SUFFIXES = {".c", ".cpp", ".h", ".hpp", ".in", ".cu"}


def read_layers(path):
    """{folder: layer index}, lowest first; a folder named twice is an error."""
    rank, layer = {}, 0
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        for folder in line.split():
            if folder in rank:
                sys.exit(f"{path}: {folder} is named twice")
            rank[folder] = layer
        layer += 1
    return rank


def folder_of(source, root):
    """The layer folder a product file belongs to."""
    parts = source.relative_to(root).parts
    if parts[0] == "src":
        return parts[1] if len(parts) > 2 else None
    if parts[0] == "include":
        return "cudadiag"
    return parts[0]


def included_folder(include, own):
    """The folder an include names: its first path part, or the including file's own folder."""
    return include.split("/", 1)[0] if "/" in include else own


def sources(root):
    for top in ("src", "probes", "cli", "include/cudadiag", "kernels"):
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES:
                yield path


def cycles(edges):
    """Every elementary cycle of the folder graph, as lists (Johnson's algorithm is overkill for
    two dozen folders: a DFS from each node, keeping cycles whose smallest node is the start)."""
    found = []
    for start in sorted(edges):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(edges.get(node, ())):
                if nxt == start:
                    found.append(path + [start])
                elif nxt not in path and nxt > start:
                    stack.append((nxt, path + [nxt]))
    return found


def main():
    root = Path(sys.argv[1]).resolve()
    rank = read_layers(root / "tests/code/layers.txt")
    problems, edges, files = [], {}, 0
    src_folders = {p.name for p in (root / "src").iterdir() if p.is_dir()}
    for folder in sorted(src_folders - set(rank)):
        problems.append(f"src/{folder}/ is not in tests/code/layers.txt: give it a layer")
    for path in sources(root):
        own = folder_of(path, root)
        if own is None:
            continue
        files += 1
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = included_folder(match.group(1), own)
            if target == own or target not in rank:
                continue  # its own folder, or a generated/test header that is not a layer
            edges.setdefault(own, set()).add(target)
            if own not in rank:
                problems.append(f"{path.relative_to(root)}: folder {own} has no layer")
            elif rank[target] >= rank[own]:
                way = "sideways (peers)" if rank[target] == rank[own] else "up"
                problems.append(f"{path.relative_to(root)}:{number}: {own} (layer {rank[own]}) includes "
                                f"{match.group(1)} of {target} (layer {rank[target]}): {way}")
    loops = cycles(edges)
    for loop in loops:
        problems.append("cycle: " + " -> ".join(loop))
    print(f"{files} files, {len(rank)} folders in {len(set(rank.values()))} layers, "
          f"{sum(len(v) for v in edges.values())} folder edges, {len(loops)} cycles")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
