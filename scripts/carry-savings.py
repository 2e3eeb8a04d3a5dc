#!/usr/bin/env python3
"""Model calls per task of a `seamark batch` output folder: as the runs made
them (a batch goes on after a change while its next elements are as the
model saw them), and as the rule before it would have (each change of the
page ended the batch, and the model was asked again for the rest: one more
call for each command that ran after a change). Usage:

    scripts/carry-savings.py BATCH_DIR [--by-task-prefix]

--by-task-prefix groups `task.seed` ids (MiniWoB++) by task."""
import collections
import json
import os
import sys


def calls_of(journal):
    """(model calls, calls the old rule would have made) of one run."""
    calls = before = 0
    with open(journal) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("kind") != "step" or rec.get("answer") is None:
                continue
            if (rec.get("skill") or {}).get("step") is not None:
                continue  # a step from a skill: no model call either way
            calls += 1
            before += 1
            outcomes = (rec.get("report") or {}).get("outcomes") or []
            before += sum(1 for o in outcomes[:-1] if o.get("page_changed"))
    return calls, before


def main():
    out = sys.argv[1]
    by_prefix = "--by-task-prefix" in sys.argv
    tasks = collections.defaultdict(lambda: [0, 0, 0, 0])  # runs, passed, after, before
    with open(os.path.join(out, "results.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            calls, before = calls_of(os.path.join(out, r["run_dir"], "journal.jsonl"))
            key = r["id"].rsplit(".", 1)[0] if by_prefix else r["id"]
            t = tasks[key]
            t[0] += 1
            t[1] += bool(r.get("passed"))
            t[2] += calls
            t[3] += before
    print("| task | runs | passed | model calls a run, before | after |")
    print("|---|---:|---:|---:|---:|")
    total = [0, 0, 0, 0]
    for key in sorted(tasks):
        n, passed, after, before = tasks[key]
        print(f"| {key} | {n} | {passed} | {before / n:.1f} | {after / n:.1f} |")
        total = [a + b for a, b in zip(total, tasks[key])]
    n, passed, after, before = total
    print(f"| **all** | {n} | {passed} | {before / n:.2f} | {after / n:.2f} |")


if __name__ == "__main__":
    main()
