#!/usr/bin/env python3
"""Prints criterion results as a markdown table of medians, with each benchmark's
ratio to the group's baseline (`screenshot` for perception, `serial` for marks).

Usage: scripts/bench-table.py [target/criterion]"""
import json, pathlib, sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
BASELINES = ("screenshot", "serial")
groups = {}
for est in sorted(root.glob("**/new/estimates.json")):
    bench_dir = est.parent.parent
    rel = bench_dir.relative_to(root).parts
    group, name = "/".join(rel[:-1]), rel[-1]
    median_ms = json.loads(est.read_text())["median"]["point_estimate"] / 1e6
    groups.setdefault(group, {})[name] = median_ms

for group, benches in sorted(groups.items()):
    base = next((benches[b] for b in BASELINES if b in benches), None)
    cells = []
    for name, ms in sorted(benches.items()):
        ratio = f" ({ms / base:.2f}×)" if base and name not in BASELINES else ""
        cells.append(f"{name} {ms:.2f} ms{ratio}")
    print(f"| {group} | " + " | ".join(cells) + " |")
