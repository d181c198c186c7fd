#!/usr/bin/env python3
"""Replay an agent trace through failmem (host-examples/REPLAY.md).

Usage::

    python host-examples/python/replay.py TRACE.jsonl [--json] [--config FILE]

Prints the same bytes as ``failmem replay`` and ``node host-examples/js/replay.mjs``.
A malformed line is reported as ``line N: ...`` on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional, TextIO

try:
    import failmem
except ImportError:  # not installed: use the source tree next to this script
    sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))
    import failmem

from failmem.canonical import config_from_json, dumps, to_json_value


class TraceError(Exception):
    """A malformed trace line; the message starts with ``line N:``."""


@dataclass
class Entry:
    """One meaningful trace line: ``kind`` is ``tool``, ``turn`` or ``compaction``."""

    line: int
    kind: str
    outcome: Optional[failmem.ToolOutcome] = None


def _shown(v: Any) -> str:
    """A JSON value as compact JSON, for error messages."""
    return dumps(v)


def parse_trace(text: str) -> List[Entry]:
    """Parses a JSON Lines trace into the lines that matter.

    Raises:
        TraceError: a line is not a JSON object, or a ``tool`` line has a field
            of the wrong type.
    """
    entries: List[Entry] = []
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as e:
            raise TraceError(f"line {n}: expected a JSON object ({e})") from None
        if not isinstance(obj, dict):
            raise TraceError(f"line {n}: expected a JSON object")
        kind = obj.get("type")
        if kind == "turn" or kind == "compaction":
            entries.append(Entry(n, kind))
        elif kind == "tool":
            entries.append(Entry(n, "tool", _tool_outcome(n, obj)))
    return entries


def _tool_outcome(n: int, obj: dict) -> failmem.ToolOutcome:
    def string(key: str) -> str:
        if key not in obj:
            return ""
        v = obj[key]
        if not isinstance(v, str):  # null included: only a missing field is ""
            raise TraceError(f"line {n}: `{key}` must be a string, not {_shown(v)}")
        return v

    exit_code = obj.get("exit_code")
    if exit_code is not None:
        if isinstance(exit_code, bool) or not isinstance(exit_code, int) or not -(2**31) <= exit_code < 2**31:
            raise TraceError(f"line {n}: `exit_code` must be a 32-bit integer or null, not {_shown(exit_code)}")
    is_error = obj.get("is_error")
    if is_error is not None and not isinstance(is_error, bool):
        raise TraceError(f"line {n}: `is_error` must be a boolean or null, not {_shown(is_error)}")
    # A missing `args` is ""; any other non-string (null included) is compact JSON.
    args = obj["args"] if "args" in obj else ""
    return failmem.ToolOutcome(
        tool=string("tool"),
        args=args if isinstance(args, str) else dumps(args),
        output=string("output"),
        exit_code=exit_code,
        is_error=is_error,
    )


# Rust's `char::is_whitespace` (Unicode White_Space), which `str::trim_end` uses.
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def _trim_end(text: str) -> str:
    """Like Rust's ``str::trim_end`` (Python's ``rstrip()`` would also strip ``\\x1c``-``\\x1f``)."""
    return text.rstrip(_RUST_WHITESPACE)


class Printer:
    """Human output: step lines, blocks and the summary."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last_recent = ""

    def line(self, text: str) -> None:
        self.out.write(text + "\n")

    def block(self, name: str, text: str) -> None:
        if not text:
            return
        self.line(f"      ┌ {name}")
        for ln in text.split("\n"):
            self.line(f"      │ {ln}" if ln else "      │")
        self.line("      └")

    def recent(self, session: failmem.Session) -> None:
        text = session.render("recent-failures")
        if text and text != self.last_recent:
            self.block("recent-failures", text)
            self.last_recent = text


def step_line(report: failmem.StepReport, tool: str) -> str:
    """``{step:>4}  {tool:<16} {category:<18} {verdict:<8}  {description}``, trailing whitespace removed."""
    c = report.classification
    category = c.category.value if c.category is not None else "ok"
    return _trim_end(f"{report.step:>4}  {tool:<16} {category:<18} {report.verdict.action.value:<8}  {c.description}")


def json_line(entry: Entry, report: failmem.StepReport) -> str:
    """The ``--json`` object for one tool line, keys in REPLAY.md order."""
    c = report.classification
    v = report.verdict
    assert entry.outcome is not None
    return dumps(
        {
            "line": entry.line,
            "step": report.step,
            "turn": report.turn,
            "tool": entry.outcome.tool,
            "category": c.category.value if c.category is not None else "none",
            "verdict": v.action.value,
            "description": c.description,
            "fingerprint": c.fingerprint,
            "rule": c.rule,
            "tracked": c.tracked,
            "terminal": c.terminal,
            "failure-id": report.failure_id,
            "reason": v.reason,
            "can-continue": v.can_continue,
            "sentinel": v.sentinel,
            "events": to_json_value(report.events),
        }
    )


def replay(entries: List[Entry], session: failmem.Session, out: TextIO, as_json: bool) -> None:
    """Replays parsed trace entries into ``session``, writing to ``out``."""
    if as_json:
        for e in entries:
            if e.kind == "turn":
                session.turn()
            elif e.kind == "compaction":
                session.compacted()
            else:
                assert e.outcome is not None
                out.write(json_line(e, session.observe(e.outcome)) + "\n")
        return

    p = Printer(out)
    for e in entries:
        if e.kind == "turn":
            p.line(f"── turn {session.turn()} ──")
        elif e.kind == "compaction":
            ledger = session.render("compaction-ledger")
            n = session.compacted()
            p.line(f"── compaction {n} ──")
            p.block("compaction-ledger", ledger)
            p.recent(session)
        else:
            assert e.outcome is not None
            report = session.observe(e.outcome)
            p.line(step_line(report, e.outcome.tool))
            if report.classification.category is not None:
                p.block("recovery", session.render("recovery"))
            action = report.verdict.action
            if action is not failmem.Action.CONTINUE:
                label = "NUDGE" if action is failmem.Action.NUDGE else "STOP"
                suffix = " (can continue)" if action is failmem.Action.STOP and report.verdict.can_continue else ""
                p.line(f"      ↳ {label}: {report.verdict.reason}{suffix}")
                p.block("nudge", session.render("nudge"))
            p.recent(session)
    s = session.stats()
    p.line(
        f"summary: {s.steps} steps, {s.turns} turns, {s.compactions} compactions, {s.failures} failures, "
        f"{s.tracked} tracked, {s.resolved} resolved, {s.nudges} nudges, {s.stops} stops"
    )


def main(argv: Optional[List[str]] = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = argparse.ArgumentParser(description="Replay an agent trace through failmem.")
    ap.add_argument("trace", help="a JSON Lines trace")
    ap.add_argument("--json", action="store_true", help="one compact JSON object per tool line")
    ap.add_argument("--config", metavar="FILE", help="a session config (canonical JSON, kebab-case keys)")
    args = ap.parse_args(argv)

    out = sys.stdout
    if hasattr(out, "reconfigure"):
        out.reconfigure(encoding="utf-8", newline="\n")

    try:
        config = failmem.Config()
        if args.config:
            cfg = json.loads(Path(args.config).read_text(encoding="utf-8"))
            if not isinstance(cfg, dict):
                raise ValueError("expected a JSON object")
            config = config_from_json(cfg)
    except (OSError, ValueError) as e:
        print(f"{args.config}: {e}", file=sys.stderr)
        return 2
    try:
        text = Path(args.trace).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        print(f"{args.trace}: {e}", file=sys.stderr)
        return 2
    try:
        entries = parse_trace(text)
    except TraceError as e:
        print(e, file=sys.stderr)
        return 2

    try:
        with failmem.Session.create(config) as session:
            replay(entries, session, out, args.json)
        out.flush()
    except failmem.FailmemError as e:
        print(f"failmem: {e.case}: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stdout = None  # type: ignore[assignment]
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
