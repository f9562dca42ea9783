"""The HTML report in a real browser (Debian's headless Chromium, installed by scripts/ensure_chromium.sh):
its script runs, its charts draw, and a screenshot shows the leaderboard and an opened task drill-down
with its highlighted fault and mid-episode constraint."""

from __future__ import annotations

import html
import json
import re
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from judges_helpers import sample_episode, sample_task, write_run

from cworld.report import build_report
from cworld.report.drilldown import episode_anchor

CHROMIUM = Path("/usr/bin/chromium")
WIDTH, HEIGHT = 1280, 5200
FAULT_BG = (0xFF, 0xF4, 0xE5)       # --fault in the report's CSS
CONSTRAINT_BG = (0xEE, 0xF4, 0xFF)  # --constraint

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium; run scripts/ensure_chromium.sh")


def chromium(url: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions", "--hide-scrollbars",
           "--force-device-scale-factor=1", f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
           "--virtual-time-budget=5000", *args, url]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=True)


def read_png(path: Path) -> tuple[int, int, list[bytes]]:
    """8-bit RGB/RGBA PNG -> (width, height, rows of RGB bytes); enough of the format for screenshots."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    assert header is not None
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), f"unexpected PNG format depth={depth} color={color}"
    return width, height, _unfilter(zlib.decompress(idat), width, height, 4 if color == 6 else 3)


def _unfilter(raw: bytes, width: int, height: int, bpp: int) -> list[bytes]:
    """Undo PNG row filters: None/Sub/Up vectorised with numpy, Average/Paeth (rare in screenshots) per byte."""
    stride = width * bpp
    prev = np.zeros(stride, dtype=np.uint8)
    rows = []
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).copy()
        if kind == 1:
            line = (np.cumsum(line.reshape(-1, bpp), axis=0, dtype=np.uint32) % 256).astype(np.uint8).ravel()
        elif kind == 2:
            line = line + prev
        elif kind in (3, 4):
            line = np.frombuffer(_sequential(kind, line.tobytes(), prev.tobytes(), bpp), dtype=np.uint8)
        rows.append(line.reshape(-1, bpp)[:, :3].tobytes())
        prev = line
    return rows


def _sequential(kind: int, line: bytes, prev: bytes, bpp: int) -> bytes:
    out = bytearray(line)
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if kind == 3:
            out[i] = (out[i] + (a + b) // 2) & 0xFF
        else:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            out[i] = (out[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return bytes(out)


def region(rows: list[bytes], rect: list[int]) -> list[tuple[int, int, int]]:
    x, y, w, h = rect
    out = []
    for row in rows[max(0, y):y + h]:
        chunk = row[3 * max(0, x):3 * (x + w)]
        out += [tuple(chunk[i:i + 3]) for i in range(0, len(chunk), 3)]
    return out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    task = sample_task(7)
    episodes = [sample_episode(task, agent, seed, skilled=agent == "careful")
                for agent in ("careful", "careless") for seed in range(2)]
    run = write_run(root / "run-x", episodes)
    result = build_report([run], root / "out")
    target = next(e for r in result.runs for e in r.episodes if e.trajectory.agent == "careless")
    url = f"{result.html_path.as_uri()}#open={episode_anchor(target)}"
    dom = chromium(url, root / "profile", "--dump-dom").stdout.decode()
    shot = root / "shot.png"
    chromium(url, root / "profile", f"--screenshot={shot}")
    match = re.search(r'data-render-check="([^"]*)"', dom)
    assert match, "the report's script did not run (no render self-check on <body>)"
    return {"check": json.loads(html.unescape(match.group(1))), "dom": dom, "shot": shot, "target": target}


def test_the_script_runs_and_the_charts_draw(rendered):
    check = rendered["check"]
    assert check["visible"] == {"leaderboard": True, "charts": True, "personas": True, "tasks": True,
                                "target": True}
    assert check["chart_shapes"] >= 12                 # bars of 2 agents on many metrics, plus 2 radars
    assert check["visible_steps"] == len(rendered["target"].trajectory.steps)
    assert 'class="step kind-tool fault' in rendered["dom"] and 'class="step kind-user constraint' in rendered["dom"]


def test_the_screenshot_shows_the_leaderboard_and_the_drill_down(rendered):
    width, height, rows = read_png(rendered["shot"])
    assert (width, height) == (WIDTH, HEIGHT)
    whole = set(region(rows, [0, 0, WIDTH, 1600]))
    assert len(whole) > 50, "the screenshot is blank"
    board = region(rows, rendered["check"]["rects"]["leaderboard"])
    assert sum(1 for px in board if max(px) < 120) > 200, "no text drawn in the leaderboard"
    target_rect = rendered["check"]["rects"]["target"]
    assert target_rect[1] + target_rect[3] <= HEIGHT, "the drill-down lies below the captured page"
    drill = region(rows, target_rect)
    assert sum(1 for px in drill if max(px) < 120) > 500, "no text drawn in the drill-down"
    assert FAULT_BG in set(drill), "the injected fault is not highlighted"
    assert CONSTRAINT_BG in set(drill), "the mid-episode constraint is not highlighted"
