"""Rebuild the plugin icon, ``.claude-plugin/icon.png``.

The icon is a relay baton: a rounded diagonal bar, half amber and half teal,
on a dark rounded-square background. It is drawn with signed distance
functions (one pixel of anti-aliasing at every edge) and written as an RGBA
PNG using only ``zlib`` and ``struct``, so no imaging library is needed.

Claude Code's ``plugin validate --profile directory`` wants a square PNG or
JPEG between 512 and 2048 pixels; the default size is 512.

Usage::

    python3 dev/make_icon.py                  # writes .claude-plugin/icon.png
    python3 dev/make_icon.py --size 1024 -o /tmp/icon.png

The output is deterministic: the same size always gives the same bytes.
"""

from __future__ import annotations

import argparse
import math
import struct
import sys
import zlib
from pathlib import Path

Colour = tuple[float, float, float]

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / ".claude-plugin" / "icon.png"
MIN_SIZE = 512
MAX_SIZE = 2048

# Palette (sRGB, 0-255).
BACKGROUND_TOP: Colour = (40.0, 46.0, 66.0)
BACKGROUND_BOTTOM: Colour = (22.0, 25.0, 38.0)
AMBER: Colour = (255.0, 176.0, 46.0)
TEAL: Colour = (38.0, 198.0, 176.0)
SEAM: Colour = (22.0, 25.0, 38.0)
SHADOW: Colour = (8.0, 9.0, 14.0)

# Geometry, as fractions of the icon size.
CORNER_RADIUS = 0.22
BATON_START = (0.25, 0.75)  # lower left
BATON_END = (0.75, 0.25)  # upper right
BATON_RADIUS = 0.085
SEAM_HALF_WIDTH = 0.012
SHADOW_OFFSET = (0.018, 0.026)
SHADOW_ALPHA = 0.45
HIGHLIGHT_STRENGTH = 0.22


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    """Limit ``value`` to the closed range [low, high]."""
    return max(low, min(high, value))


def coverage(distance: float) -> float:
    """Turn a signed distance in pixels into pixel coverage (1 inside, 0 outside)."""
    return clamp(0.5 - distance)


def mix(a: Colour, b: Colour, t: float) -> Colour:
    """Linear blend from ``a`` (t = 0) to ``b`` (t = 1)."""
    return (
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    )


def rounded_square_distance(x: float, y: float, size: float, radius: float) -> float:
    """Signed distance from (x, y) to a square of side ``size`` with rounded corners."""
    half = size / 2.0
    qx = abs(x - half) - (half - radius)
    qy = abs(y - half) - (half - radius)
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    inside = min(max(qx, qy), 0.0)
    return outside + inside - radius


def capsule(
    x: float, y: float, ax: float, ay: float, bx: float, by: float, radius: float
) -> tuple[float, float, float]:
    """Describe (x, y) relative to the capsule from a to b.

    Returns the signed distance to the capsule's edge, the position along the
    axis in pixels from the midpoint (negative towards ``a``), and the signed
    perpendicular offset from the axis in pixels.
    """
    dx, dy = bx - ax, by - ay
    length = math.hypot(dx, dy)
    ux, uy = dx / length, dy / length
    px, py = x - ax, y - ay
    along = px * ux + py * uy
    across = px * -uy + py * ux
    h = clamp(along / length)
    cx, cy = px - dx * h, py - dy * h
    return math.hypot(cx, cy) - radius, along - length / 2.0, across


def render(size: int) -> bytes:
    """Return the raw RGBA pixel rows of the icon, each prefixed with PNG filter 0."""
    s = float(size)
    corner = CORNER_RADIUS * s
    ax, ay = BATON_START[0] * s, BATON_START[1] * s
    bx, by = BATON_END[0] * s, BATON_END[1] * s
    radius = BATON_RADIUS * s
    seam = SEAM_HALF_WIDTH * s
    sx, sy = SHADOW_OFFSET[0] * s, SHADOW_OFFSET[1] * s

    out = bytearray()
    for row in range(size):
        out.append(0)
        y = row + 0.5
        background = mix(BACKGROUND_TOP, BACKGROUND_BOTTOM, y / s)
        for col in range(size):
            x = col + 0.5
            alpha = coverage(rounded_square_distance(x, y, s, corner))
            if alpha <= 0.0:
                out += b"\x00\x00\x00\x00"
                continue
            colour = background

            # Soft drop shadow: the same capsule, shifted and blurred a little.
            shadow_distance, _, _ = capsule(x - sx, y - sy, ax, ay, bx, by, radius)
            shadow = clamp(0.5 - shadow_distance / (0.02 * s)) * SHADOW_ALPHA
            colour = mix(colour, SHADOW, shadow)

            distance, along, across = capsule(x, y, ax, ay, bx, by, radius)
            body = coverage(distance)
            if body > 0.0:
                # Amber towards the lower-left end, teal towards the upper-right.
                half = mix(AMBER, TEAL, clamp(along + 0.5))
                # A light band along the upper side reads as a rounded bar.
                light = clamp(1.0 - abs(across + radius * 0.45) / (radius * 0.35))
                half = mix(half, (255.0, 255.0, 255.0), light * HIGHLIGHT_STRENGTH)
                # A dark seam where the two halves meet, the hand-over point.
                half = mix(half, SEAM, coverage(abs(along) - seam))
                colour = mix(colour, half, body)

            out += bytes(
                (
                    round(clamp(colour[0], 0.0, 255.0)),
                    round(clamp(colour[1], 0.0, 255.0)),
                    round(clamp(colour[2], 0.0, 255.0)),
                    round(alpha * 255.0),
                )
            )
    return bytes(out)


def png_chunk(kind: bytes, data: bytes) -> bytes:
    """Encode one PNG chunk: length, type, data, CRC."""
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def encode_png(size: int, rows: bytes) -> bytes:
    """Wrap filtered RGBA rows of a ``size`` x ``size`` image in a PNG file."""
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", header)
        + png_chunk(b"IDAT", zlib.compress(rows, 9))
        + png_chunk(b"IEND", b"")
    )


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, draw the icon and write it."""
    parser = argparse.ArgumentParser(description="Rebuild the baton plugin icon.")
    parser.add_argument(
        "--size",
        type=int,
        default=MIN_SIZE,
        help=f"edge length in pixels, {MIN_SIZE}-{MAX_SIZE} (default {MIN_SIZE})",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="where to write the PNG (default .claude-plugin/icon.png)",
    )
    args = parser.parse_args(argv)
    size: int = args.size
    output: Path = args.output
    if not MIN_SIZE <= size <= MAX_SIZE:
        parser.error(f"--size must be between {MIN_SIZE} and {MAX_SIZE}")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(encode_png(size, render(size)))
    print(f"wrote {output} ({size}x{size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
