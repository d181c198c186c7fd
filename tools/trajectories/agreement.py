#!/usr/bin/env python3
"""How far a second labeller agrees with the first on whether a run is stuck, and how the
detector does against each.

usage: python3 tools/trajectories/agreement.py VERBOSE.txt

VERBOSE.txt is the output of
  FAILMEM_TRAJECTORIES=DIR FAILMEM_TRAJECTORIES_VERBOSE=1 \
    cargo test -p failmem --release --test trajectories -- --nocapture
(one line per run with its verdict and flags, then each set's summary line). The first labels
are docs/research/trajectories/<set>-labels.jsonl; the second are
docs/research/trajectories/agreement/second-labels.jsonl.
"""
import collections
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2] / "docs" / "research" / "trajectories"
RUN = re.compile(r"  (caught|MISSED|quiet|false nudge|false stop)\s+(\S+)\s+kind=\S+\s+from=\s*\S+"
                 r"\s+calls=\s*\d+\s+flags=(\S*)")
SET = re.compile(r"(blind\d*|corpus): stuck runs")
FLAG = re.compile(r"(nudge|stop)@(\d+)")
WINDOW = 10


def verdicts(path):
    """(set, file prefix) -> (verdict, [(action, call)]) from the verbose test output."""
    out, pending = {}, []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = RUN.match(line)
        if m:
            pending.append((m.group(2), m.group(1), [(a, int(n)) for a, n in FLAG.findall(m.group(3))]))
            continue
        m = SET.match(line)
        if m:
            for name, verdict, flags in pending:
                out[(m.group(1), name)] = (verdict, flags)
            pending = []
    return out


def find(table, set_name, file):
    """The entry of `file`: the verbose output cuts long names, so a unique
    prefix will do."""
    if (set_name, file) in table:
        return table[(set_name, file)]
    hits = [v for (s, name), v in table.items() if s == set_name and file.startswith(name)]
    if len(hits) != 1:
        raise SystemExit(f"{len(hits)} verdicts for {set_name}/{file} in the verbose output")
    return hits[0]


def caught(flags, stuck_from):
    return any(stuck_from <= n <= stuck_from + WINDOW for _, n in flags)


def main(path):
    table = verdicts(path)
    second = [json.loads(l) for l in (HERE / "agreement" / "second-labels.jsonl").open(encoding="utf-8")]
    first = {}
    for s in {r["set"] for r in second}:
        for line in (HERE / f"{s}-labels.jsonl").open(encoding="utf-8"):
            if line.strip():
                d = json.loads(line)
                first[(s, d["file"])] = d
    rows = []
    for r in second:
        f = first[(r["set"], r["file"])]
        verdict, flags = find(table, r["set"], r["file"])
        rows.append((f, r, verdict, flags))

    def agree(rs):
        return sum(1 for f, r, _, _ in rs if bool(f["stuck"]) == bool(r["stuck"]))

    sure = [x for x in rows if x[1].get("confidence") == "sure"]
    print(f"runs: {len(rows)}; the two labellers agree on stuck or not: {agree(rows)} "
          f"({100 * agree(rows) / len(rows):.0f}%); where the second was sure: {agree(sure)} of {len(sure)}")
    print()
    print("| the detector's verdict (first labels) | runs | the second labeller calls it stuck | … and sure |")
    print("|---|---:|---:|---:|")
    by = collections.defaultdict(list)
    for x in rows:
        by[x[2]].append(x)
    for verdict in ("caught", "MISSED", "false nudge", "false stop", "quiet"):
        xs = by.get(verdict, [])
        if xs:
            stuck = [x for x in xs if x[1]["stuck"]]
            print(f"| {verdict} | {len(xs)} | {len(stuck)} | "
                  f"{sum(1 for x in stuck if x[1].get('confidence') == 'sure')} |")
    print()
    both = [x for x in rows if x[0]["stuck"] and x[1]["stuck"]]
    by_first = sum(1 for f, _, _, fl in both if caught(fl, f["stuck_from"]))
    by_second = sum(1 for _, r, _, fl in both if caught(fl, r["stuck_from"]))
    print(f"stuck to both: {len(both)}; caught within {WINDOW} calls of the first label's start: "
          f"{by_first}; of the second's: {by_second}")
    sec_stuck = [x for x in rows if x[1]["stuck"]]
    print(f"stuck to the second: {len(sec_stuck)}; caught within {WINDOW} calls of its start: "
          f"{sum(1 for _, r, _, fl in sec_stuck if caught(fl, r['stuck_from']))}")
    sec_not = [x for x in rows if not x[1]["stuck"]]
    print(f"not stuck to the second: {len(sec_not)}; stopped: "
          f"{sum(1 for *_, fl in sec_not if any(a == 'stop' for a, _ in fl))}; nudged or stopped: "
          f"{sum(1 for *_, fl in sec_not if fl)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
