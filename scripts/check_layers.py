#!/usr/bin/env python3
"""Checks that kubesched's modules include only modules below them (README "Layout").

Every folder under src/ belongs to one layer; a non-test source file may include headers of its own
layer or of a lower one, never of a higher one. Test code (*_test.cc, *_test_util.h) may include
anything. Prints each upward include as `file:line: includes <header> (layer <a> above <b>)` and
exits 1 when there is one, 0 otherwise.

Usage: scripts/check_layers.py [SOURCE_DIR]   (default: the src/ beside this script)
       scripts/check_layers.py --svg docs/layers.svg   (draws the layer order, highest on top)
"""

import os
import re
import sys

# The layers, lowest first. Folders on one line are one layer: they may include each other (they
# do not, today, but nothing orders them).
LAYERS = [
    ["util"],
    ["api"],
    # The CEL subset of DRA's device selectors (needs api's quantities, versions and devices).
    ["cel"],
    ["store", "store/controllers"],
    # A Kubernetes API client (REST, reflectors, leader election): like client-go, below all that
    # uses it, and knowing nothing of scheduling.
    ["client"],
    # The servers' HTTP layer and the API test bed (routing, discovery, tables, RBAC).
    ["server"],
    ["framework"],
    ["metrics"],
    ["config"],
    ["framework/runtime", "framework/preemption"],
    # The frameworks of a configuration's profiles (upstream's pkg/scheduler/profile).
    ["profile"],
    ["optimizer"],
    ["plugins"],
    ["queue", "cache", "cluster"],
    ["scheduler"],
    ["extender"],
    ["sim"],
    ["report"],
    # Builders and fakes for tests, and the SDK's test helpers (sdk/testing.h) built on them.
    ["testing"],
    ["sdk"],
    ["cmd"],
]

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_index():
    index = {}
    for rank, folders in enumerate(LAYERS):
        for folder in folders:
            index[folder] = rank
    return index


def folder_of(path, index):
    """The most specific layered folder that holds `path` (relative to src/), or None."""
    parts = path.split("/")[:-1]
    while parts:
        folder = "/".join(parts)
        if folder in index:
            return folder
        parts.pop()
    return None


def is_test(path):
    return path.endswith(("_test.cc", "_test_util.h"))


def check(src):
    index = layer_index()
    problems = []
    unknown = set()
    for root, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".h", ".cc")):
                continue
            rel = os.path.relpath(os.path.join(root, name), src).replace(os.sep, "/")
            if is_test(rel):
                continue
            here = folder_of(rel, index)
            if here is None:
                unknown.add(rel.rsplit("/", 1)[0] if "/" in rel else ".")
                continue
            with open(os.path.join(root, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    there = folder_of(m.group(1), index)
                    if there is None or index[there] <= index[here]:
                        continue
                    problems.append(f"src/{rel}:{number}: includes {m.group(1)} "
                                    f"(layer {there} above {here})")
    for folder in sorted(unknown):
        problems.append(f"src/{folder}: a folder no layer holds (add it to LAYERS in {__file__})")
    return problems


def svg(src):
    """The layer order as a picture: one row per layer, highest first, each folder a box with the
    folders below it that it includes (an arrow points down, as every include does)."""
    index = layer_index()
    uses = {}
    for root, _, files in os.walk(src):
        for name in files:
            rel = os.path.relpath(os.path.join(root, name), src).replace(os.sep, "/")
            if not name.endswith((".h", ".cc")) or is_test(rel):
                continue
            here = folder_of(rel, index)
            with open(os.path.join(root, name), encoding="utf-8") as f:
                for line in f:
                    m = INCLUDE.match(line)
                    there = folder_of(m.group(1), index) if m else None
                    if here and there and there != here:
                        uses.setdefault(here, set()).add(there)
    width, row, box_w, gap = 1100, 58, 172, 12
    rows = list(reversed(LAYERS))
    height = 40 + row * len(rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="13">',
           f'<text x="10" y="22" font-size="15">kubesched: src/ layers, highest on top; every include '
           f'points to the same layer or one below (scripts/check_layers.py)</text>']
    for r, folders in enumerate(rows):
        y = 36 + r * row
        for c, folder in enumerate(folders):
            x = 10 + c * (box_w + gap)
            below = sorted(uses.get(folder, ()), key=lambda f: (-index[f], f))
            out.append(f'<rect x="{x}" y="{y}" width="{box_w}" height="{row - 14}" rx="6" '
                       f'fill="#eef3fb" stroke="#4a6fa5"/>')
            out.append(f'<text x="{x + 8}" y="{y + 18}" font-weight="bold">{folder}/</text>')
            if below:
                out.append(f'<text x="{x + box_w + 4 if len(folders) == 1 else x + 8}" '
                           f'y="{y + 36 if len(folders) > 1 else y + 18}" font-size="11" fill="#555">'
                           f'{"&#8595; " + ", ".join(below) if len(folders) == 1 else ""}</text>')
        if len(folders) > 1:
            lines = [f"{f}: {', '.join(sorted(uses.get(f, ()), key=lambda g: (-index[g], g)))}"
                     for f in folders if uses.get(f)]
            x = 10 + len(folders) * (box_w + gap)
            for k, text in enumerate(lines):
                out.append(f'<text x="{x}" y="{y + 14 + 13 * k}" font-size="11" fill="#555">&#8595; {text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--svg":
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            f.write(svg(os.path.normpath(src)))
        return 0
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    problems = check(os.path.normpath(src))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) against the layer order")
        return 1
    print("every include points down the layer order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
