"""The HTML report in a real browser: headless Chromium (Debian's `chromium` package) renders the
page cudadiag writes with --html and takes a screenshot; the test decodes the PNG and checks that
the page rendered and that the verdict banner, in the verdict's colour, is at the top, in windows
500, 800 and 1280 px wide; and, from the DOM after layout, that the page is no wider than the window
(nothing overflows sideways) and that it has the verification section. Skipped when Chromium is not
installed."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from cudadiag_harness import describe, fake_driver_env, run

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# 800 and 1280 px windows, and Chromium's narrowest (500 px), where long paths and tables would
# overflow without the page's narrow-window rules.
WIDTHS, HEIGHT = (500, 800, 1280), 1400

# The verdict banners' background colours (src/report/html_report.cpp).
VERDICT_COLOURS = {"ok": (0xDA, 0xFB, 0xE1), "warning": (0xFF, 0xF8, 0xC5), "error": (0xFF, 0xEB, 0xE9)}


def browser() -> str:
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(f"no headless browser installed ({', '.join(BROWSERS)}); install Debian's chromium package")


def screenshot(page: Path, out: Path, profile: Path, width: int) -> None:
    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               f"--user-data-dir={profile}", f"--window-size={width},{HEIGHT}", f"--screenshot={out}",
               page.as_uri()]
    done = subprocess.run(command, capture_output=True, timeout=120, check=False,
                          env=dict(os.environ, HOME=str(profile)))
    assert done.returncode == 0 and out.is_file(), f"{command}\n{done.stderr.decode(errors='replace')[-3000:]}"


def decode_png_rows(path: Path, rows: int) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """Width, height and the first `rows` rows of an 8-bit RGB/RGBA PNG as RGB tuples."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, idat, header = 8, b"", None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        chunk = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompressobj().decompress(idat, (stride + 1) * rows)
    previous = bytearray(stride)
    out = []
    for y in range(rows):
        line = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, current = line[0], bytearray(line[1:])
        for x in range(stride):
            left = current[x - channels] if x >= channels else 0
            up = previous[x]
            upper_left = previous[x - channels] if x >= channels else 0
            if kind == 1:
                current[x] = (current[x] + left) & 0xFF
            elif kind == 2:
                current[x] = (current[x] + up) & 0xFF
            elif kind == 3:
                current[x] = (current[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else upper_left
                current[x] = (current[x] + predictor) & 0xFF
        out.append([tuple(current[i:i + 3]) for i in range(0, stride, channels)])
        previous = current
    return width, height, out


def close(a, b, tolerance=6) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


@pytest.fixture
def env(tmp_path) -> dict:
    return fake_driver_env(tmp_path / "driver")


def page_overflow(page: Path, profile: Path, width: int) -> tuple[int, int]:
    """(scrollWidth, innerWidth) of the page laid out in a window `width` px wide, from the DOM
    headless Chromium dumps after a measuring script (added to a copy of the page) has run."""
    measured = page.with_name(page.stem + f"-measured-{width}.html")
    script = ("<script>document.body.setAttribute('data-widths', "
              "document.documentElement.scrollWidth + ' ' + window.innerWidth);</script>")
    measured.write_text(page.read_text().replace("</body>", script + "</body>"))
    command = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               f"--user-data-dir={profile}", f"--window-size={width},{HEIGHT}", "--dump-dom", measured.as_uri()]
    done = subprocess.run(command, capture_output=True, timeout=120, check=False,
                          env=dict(os.environ, HOME=str(profile)))
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    found = re.search(r'data-widths="(\d+) (\d+)"', done.stdout.decode())
    assert found, done.stdout.decode()[-2000:]
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("requirements, verdict", [([], "ok"), (["--require", "driver>=999"], "error")])
def test_the_html_report_renders_in_chromium_with_the_verdict_on_top(requirements, verdict, width, env, tmp_path):
    browser()
    page = tmp_path / "report.html"
    result = run(["--no-selftest", "--html", str(page), *requirements], env=env, timeout=60)
    assert result.returncode == (0 if verdict == "ok" else 1), describe(result)
    html = page.read_text()
    assert 'id="verification"' in html and "Verification" in html, "no verification section"
    scroll, inner = page_overflow(page, tmp_path / "profile-measure", width)
    assert scroll <= inner, f"the page is {scroll} px wide in a {inner} px window"
    shot = tmp_path / "report.png"
    screenshot(page, shot, tmp_path / "profile", width)
    width_seen, height, rows = decode_png_rows(shot, 200)
    assert (width_seen, height) == (width, HEIGHT)
    pixels = [pixel for row in rows for pixel in row]
    banner = sum(1 for pixel in pixels if close(pixel, VERDICT_COLOURS[verdict]))
    # The banner spans the page's width near the top: a large share of the first 200 rows.
    assert banner > len(pixels) // 4, f"{banner} of {len(pixels)} pixels in the {verdict} colour"
    for other, colour in VERDICT_COLOURS.items():
        if other != verdict:
            assert sum(1 for pixel in pixels if close(pixel, colour)) < len(pixels) // 50, other
    dark = sum(1 for pixel in pixels if max(pixel) < 90)
    assert dark > 500, "no text rendered in the banner"
    keep = os.environ.get("CUDADIAG_SCREENSHOT_DIR")
    if keep:
        shutil.copy2(shot, Path(keep) / f"report-{verdict}-{width}.png")
