"""The baseline in Python: bench/baseline.mjs line for line (see there and
BENCHMARKS.md). A failure is what the host flags (is_error, or a non-zero
exit code); its category comes from an 11-category substring table."""

from typing import Any, Dict, List, Optional

TABLE = [
    ("permission", ("permission denied", "access denied", "eacces", "unauthorized")),
    ("not_found", ("not found", "no such file", "enoent", "does not exist", "404")),
    ("syntax", ("syntax error", "unexpected token", "parse error", "invalid json")),
    ("type", ("type error", "typeerror", "is not a function", "cannot read propert")),
    ("network", ("network", "connection", "econnrefused", "socket", "fetch failed")),
    ("timeout", ("timeout", "timed out", "etimedout")),
    ("validation", ("validation", "invalid", "required", "must be")),
    ("logic", ("assertion", "invariant", "expect")),
    ("resource", ("out of memory", "disk full", "enomem", "enospc", "quota")),
    ("runtime", ("exception", "traceback", "panicked", "error")),
]

MAPPING = {
    "permission": "permission",
    "not_found": "not-found",
    "syntax": "syntax",
    "type": "type-error",
    "network": "network",
    "timeout": "timeout",
    "validation": "invalid-arguments",
    "logic": "test-failure",
    "resource": "resource",
    "runtime": "runtime",
    "unknown": "unknown",
}


def categorize(output: str, exit_code: Optional[int], is_error: Optional[bool]) -> str:
    """The baseline category, or ``"none"`` when the outcome is not a failure."""
    if not (is_error is True or (exit_code is not None and exit_code != 0)):
        return "none"
    lower = output.lower()
    for category, needles in TABLE:
        for n in needles:
            if n in lower:
                return category
    return "unknown"


class Tracker:
    """Record, count repeats by tool + error prefix, build the context block."""

    def __init__(self, max_failures: int = 50) -> None:
        self.max_failures = max_failures
        self.failures: List[Dict[str, Any]] = []
        self.iteration = 0

    def step(self, tool: str, args: Any, output: str, exit_code: Optional[int], is_error: Optional[bool]) -> str:
        self.iteration += 1
        category = categorize(output, exit_code, is_error)
        if category != "none":
            error = next((l for l in output.split("\n") if l.strip()), "")
            key = f"{tool}:{error[:100]}"
            repeat = sum(1 for f in self.failures if f["key"] == key) + 1
            self.failures.append(
                {"key": key, "action": tool, "args": args, "error": error[:200], "category": category,
                 "iteration": self.iteration, "repeat_count": repeat, "resolved": False}
            )
            if len(self.failures) > self.max_failures:
                self.failures.pop(0)
        return self.context()

    def context(self) -> str:
        open_ = [f for f in self.failures if not f["resolved"]][-10:]
        if not open_:
            return ""
        lines = ["[Previous Failures - Learn from these to avoid repeating mistakes]", ""]
        for f in open_:
            lines.append(f"**{f['action']}** ({f['category']}): {f['error']}")
            lines.append(f"  Args: {f['args'][:200]}")
        return "\n".join(lines)
