"""The Teams app package: teams/manifest.json and its two icons, as Teams requires them."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

from tests.conftest import REPO

TEAMS = REPO / "teams"


def _png(path: Path) -> tuple[int, int, int, list[list[tuple[int, ...]]]]:
    """Width, height, colour type and RGBA rows of an 8-bit PNG written without row filters."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    idat, at = b"", 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        chunk = data[at + 8:at + 8 + length]
        assert struct.unpack(">I", data[at + 8 + length:at + 12 + length])[0] == zlib.crc32(kind + chunk)
        idat += chunk if kind == b"IDAT" else b""
        at += 12 + length
    raw, stride = zlib.decompress(idat), width * 4 + 1
    assert depth == 8 and all(raw[y * stride] == 0 for y in range(height))
    rows = [[tuple(raw[y * stride + 1 + x * 4:y * stride + 5 + x * 4]) for x in range(width)] for y in range(height)]
    return width, height, colour, rows


def test_manifest_declares_the_bot_its_scopes_and_commands() -> None:
    manifest = json.loads((TEAMS / "manifest.json").read_text())
    assert manifest["manifestVersion"] == "1.19" and manifest["$schema"].endswith("v1.19/MicrosoftTeams.schema.json")
    assert manifest["id"] == "{{TEAMS_APP_ID}}", "filled in from TEAMS_APP_ID (README)"
    [bot] = manifest["bots"]
    assert bot["botId"] == "{{TEAMS_APP_ID}}" and set(bot["scopes"]) == {"personal", "team", "groupChat"}
    [commands] = bot["commandLists"]
    assert [c["title"] for c in commands["commands"]] == ["runbook", "help"]
    assert all(len(c["title"]) <= 32 and len(c["description"]) <= 128 for c in commands["commands"])
    assert len(manifest["name"]["short"]) <= 30 and len(manifest["description"]["short"]) <= 80
    assert len(manifest["description"]["full"]) <= 4000
    assert manifest["icons"] == {"color": "color.png", "outline": "outline.png"}


def test_icons_have_the_sizes_teams_requires() -> None:
    width, height, colour, rows = _png(TEAMS / "color.png")
    assert (width, height, colour) == (192, 192, 6)
    assert all(px[3] == 255 for row in rows for px in row), "the colour icon is opaque"
    width, height, colour, rows = _png(TEAMS / "outline.png")
    assert (width, height, colour) == (32, 32, 6)
    pixels = [px for row in rows for px in row]
    assert all(px[3] == 0 or px[:3] == (255, 255, 255) for px in pixels), "white on transparent only"
    assert any(px[3] == 0 for px in pixels) and any(px[3] == 255 for px in pixels)
