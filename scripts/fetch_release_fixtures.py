#!/usr/bin/env python3
"""Fetches the small text files of real framework releases that the tests use as fixtures
(tests/fixtures/releases/), reading only those members of each wheel from PyPI with HTTP range
requests: a 500 MB torch wheel costs a few hundred kilobytes. Run by hand when a fixture is
added; the tests never touch the network.

    scripts/fetch_release_fixtures.py [OUT_DIR] [NAME-VERSION ...]   (default tests/fixtures/releases, all)

Each release lands in OUT_DIR/<name>-<version>/ with the wheel's members under their own paths
(torch/version.py, torch-2.9.0.dist-info/METADATA, ...) and SOURCE.txt naming the wheel, its URL
and its sha256 from PyPI.
"""

import json
import pathlib
import struct
import sys
import urllib.parse
import urllib.request
import zlib

# (distribution, version, wheel filename must contain, members: exact paths or "*.dist-info/METADATA")
RELEASES = [
    ("torch", "2.8.0", "cp311-cp311-manylinux_2_28_x86_64", ["*.dist-info/METADATA", "torch/version.py"]),
    ("torch", "2.11.0", "cp311-cp311-manylinux_2_28_x86_64", ["*.dist-info/METADATA", "torch/version.py"]),
    ("jax", "0.11.2", "py3-none-any", ["*.dist-info/METADATA"]),
    ("jax-cuda12-plugin", "0.11.2", "manylinux", ["*.dist-info/METADATA"]),
    ("jax-cuda13-plugin", "0.11.2", "manylinux", ["*.dist-info/METADATA"]),
    ("cupy-cuda12x", "14.2.0", "manylinux2014_x86_64", ["*.dist-info/METADATA", "cupy/.data/_wheel.json"]),
    ("cupy-cuda13x", "14.2.0", "manylinux2014_x86_64", ["*.dist-info/METADATA", "cupy/.data/_wheel.json"]),
    ("tensorflow", "2.21.0", "manylinux",
     ["*.dist-info/METADATA", "tensorflow/python/platform/build_info.py"]),
    ("vllm", "0.34.0", "manylinux", ["*.dist-info/METADATA"]),
    ("triton", "3.7.0", "manylinux", ["*.dist-info/METADATA"]),
    # Two distributions that install the same file (RECORD integrity: python.file_overwritten).
    ("nvidia-nccl-cu11", "2.14.3", "manylinux1_x86_64", ["*.dist-info/METADATA", "*.dist-info/RECORD"]),
    ("nvidia-nccl-cu12", "2.27.3", "manylinux2014_x86_64", ["*.dist-info/METADATA", "*.dist-info/RECORD"]),
    ("nvidia-nvshmem-cu12", "3.4.5", "manylinux2014_x86_64", ["*.dist-info/METADATA", "*.dist-info/RECORD"]),
    ("nvidia-nvshmem-cu13", "3.4.5", "manylinux2014_x86_64", ["*.dist-info/METADATA", "*.dist-info/RECORD"]),
]


def http_range(url, start, length):
    request = urllib.request.Request(url, headers={"Range": f"bytes={start}-{start + length - 1}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        if response.status != 206:
            raise RuntimeError(f"{url}: no range support (HTTP {response.status})")
        return response.read()


def content_length(url):
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as response:
        return int(response.headers["Content-Length"])


def central_directory(url, size):
    tail = http_range(url, max(0, size - 65_557), min(size, 65_557))
    at = tail.rfind(b"PK\x05\x06")
    if at < 0:
        raise RuntimeError(f"{url}: no end of central directory")
    _, _, _, _, count, cd_size, cd_offset, _ = struct.unpack_from("<IHHHHIIH", tail, at)
    if cd_offset == 0xFFFFFFFF or count == 0xFFFF:  # zip64: the locator precedes the record
        locator = tail.rfind(b"PK\x06\x07", 0, at)
        (record_offset,) = struct.unpack_from("<Q", tail, locator + 8)
        record = http_range(url, record_offset, 56)
        count, cd_size, cd_offset = struct.unpack_from("<QQQ", record, 32)
    data = http_range(url, cd_offset, cd_size)
    entries, pos = {}, 0
    for _ in range(count):
        (sig, _, _, _, method, _, _, _, csize, usize, nlen, xlen, clen, _, _, _, local) = struct.unpack_from(
            "<IHHHHHHIIIHHHHHII", data, pos)
        name = data[pos + 46:pos + 46 + nlen].decode()
        extra = data[pos + 46 + nlen:pos + 46 + nlen + xlen]
        if 0xFFFFFFFF in (csize, usize, local):  # zip64 extra field, in order usize, csize, offset
            values = iter(struct.unpack_from("<" + "Q" * ((len(extra) - 4) // 8), extra, 4))
            usize = next(values) if usize == 0xFFFFFFFF else usize
            csize = next(values) if csize == 0xFFFFFFFF else csize
            local = next(values) if local == 0xFFFFFFFF else local
        entries[name] = (method, csize, local)
        pos += 46 + nlen + xlen + clen
    return entries


def member(url, method, csize, local):
    header = http_range(url, local, 30)
    nlen, xlen = struct.unpack_from("<HH", header, 26)
    data = http_range(url, local + 30 + nlen + xlen, csize) if csize else b""
    return data if method == 0 else zlib.decompress(data, -15)


def wheel_for(name, version, marker):
    index = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(index, timeout=60) as response:
        files = json.load(response)["releases"].get(version, [])
    for file in files:  # a mirror may answer with URLs relative to the index
        file["url"] = urllib.parse.urljoin(index, file["url"])
    for file in files:
        if file["filename"].endswith(".whl") and marker in file["filename"] and "x86_64" in file["filename"] or (
                marker == "py3-none-any" and file["filename"].endswith("py3-none-any.whl")):
            return file
    raise RuntimeError(f"{name} {version}: no wheel matching {marker}")


def main():
    out_dir = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/releases")
    only = set(sys.argv[2:])  # NAME-VERSION: fetch these releases alone
    for name, version, marker, wanted in RELEASES:
        if only and f"{name}-{version}" not in only:
            continue
        wheel = wheel_for(name, version, marker)
        url = wheel["url"]
        entries = central_directory(url, content_length(url))
        target = out_dir / f"{name}-{version}"
        for pattern in wanted:
            matches = [n for n in entries if n == pattern or (pattern.startswith("*") and n.endswith(pattern[1:])
                                                               and n.count("/") == pattern.count("/"))]
            if not matches:
                raise RuntimeError(f"{wheel['filename']}: no member {pattern}")
            for path in matches:
                (target / path).parent.mkdir(parents=True, exist_ok=True)
                (target / path).write_bytes(member(url, *entries[path]))
        (target / "SOURCE.txt").write_text(
            f"{wheel['filename']}\n{url}\nsha256 {wheel['digests']['sha256']}\n"
            f"members: {', '.join(wanted)}\n")
        print(f"{name} {version}: {wheel['filename']}")


if __name__ == "__main__":
    main()
