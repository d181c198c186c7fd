"""The Pythonic wrapper around the WIT ``tracker.session`` resource."""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Union

from . import _engine as low
from ._engine import Engine, default_engine
from .types import (
    Classification,
    Config,
    FailureRecord,
    Ledger,
    Pattern,
    RuleInfo,
    Stats,
    StepReport,
    ToolOutcome,
)

__all__ = ["Session", "classify", "rules"]

ConfigLike = Union[Config, Mapping[str, Any], None]


def _to_config(config: ConfigLike) -> Config:
    if config is None:
        return Config()
    if isinstance(config, Config):
        return config
    if isinstance(config, Mapping):
        # Lazy import: canonical depends on this module's siblings only.
        from .canonical import config_from_json

        return config_from_json(config)
    raise TypeError(f"config must be a Config or a mapping, not {type(config).__name__}")


def _to_outcome(outcome: Optional[ToolOutcome], fields: Mapping[str, Any]) -> ToolOutcome:
    if outcome is not None and fields:
        raise TypeError("pass either a ToolOutcome or keyword fields, not both")
    if outcome is None:
        return ToolOutcome(**fields)
    if not isinstance(outcome, ToolOutcome):
        raise TypeError(f"outcome must be a ToolOutcome, not {type(outcome).__name__}")
    return outcome


def classify(outcome: Optional[ToolOutcome] = None, /, *, engine: Optional[Engine] = None, **fields: Any) -> Classification:
    """Classifies one tool outcome with the built-in rules.

    Pass a :class:`ToolOutcome`, or its fields as keywords
    (``classify(tool="bash", output="...", exit_code=1)``). Never fails.
    """
    return (engine or default_engine()).classify(_to_outcome(outcome, fields))


def rules(*, engine: Optional[Engine] = None) -> List[RuleInfo]:
    """The built-in rule table, in precedence order."""
    return (engine or default_engine()).rules()


class Session:
    """One agent session's failure memory (the WIT ``session`` resource).

    Create one with :meth:`create` or :meth:`restore`, never directly. Use it
    as a context manager, or call :meth:`close`, to drop the resource::

        with Session.create(Config(breaker_threshold=3)) as s:
            report = s.observe(tool="bash", args={"command": "make"}, output="...", exit_code=2)

    Methods that can fail raise a :class:`failmem.FailmemError` subclass and
    leave the session unchanged.
    """

    def __init__(self, engine: Engine, handle: Any) -> None:
        """Wraps an owned resource handle; use :meth:`create` or :meth:`restore`."""
        self._engine = engine
        self._handle: Any = handle

    # ---- construction and lifetime -----------------------------------------

    @classmethod
    def create(cls, config: ConfigLike = None, *, engine: Optional[Engine] = None) -> "Session":
        """Creates a session.

        Args:
            config: A :class:`Config`, a mapping in canonical (kebab-case) JSON
                form, or ``None`` for all defaults.
            engine: The engine to create it in; the default engine otherwise.

        Raises:
            InvalidConfigError: a field is invalid (the message names it).
            InvalidTemplateError: a config template does not compile.
        """
        eng = engine or default_engine()
        raw = eng.call("[static]session.create", low.lower_config(_to_config(config)))
        return cls(eng, low.unwrap_result(raw))

    @classmethod
    def restore(cls, snapshot: str, *, engine: Optional[Engine] = None) -> "Session":
        """Restores a session from :meth:`snapshot` output.

        Raises:
            InvalidSnapshotError: the text is not a readable snapshot.
            UnsupportedVersionError: it was written by an unknown format version.
        """
        eng = engine or default_engine()
        raw = eng.call("[static]session.restore", low._str("snapshot", snapshot))
        return cls(eng, low.unwrap_result(raw))

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has dropped the resource."""
        return self._handle is None

    def close(self) -> None:
        """Drops the resource. Idempotent; the session is unusable afterwards."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._engine.drop(handle)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _h(self) -> Any:
        if self._handle is None:
            raise RuntimeError("the failmem session is closed")
        return self._handle

    def _call(self, name: str, *args: Any) -> Any:
        return self._engine.call(f"[method]session.{name}", self._h(), *args)

    # ---- the WIT methods ---------------------------------------------------

    def observe(self, outcome: Optional[ToolOutcome] = None, /, **fields: Any) -> StepReport:
        """Observes one tool outcome, success or failure, and says what to do.

        Pass a :class:`ToolOutcome` or its fields as keywords. ``args`` may be
        a JSON string or any JSON-serializable value. Never fails.
        """
        return low.lift_step_report(self._call("observe", low.lower_outcome(_to_outcome(outcome, fields))))

    def turn(self) -> int:
        """Marks the start of a new agent turn and returns its number."""
        return self._call("turn")

    def compacted(self) -> int:
        """Marks a context compaction and returns how many there have been."""
        return self._call("compacted")

    def resolve(self, failure_id: int) -> None:
        """Marks a tracked failure resolved.

        Raises:
            UnknownFailureError: no tracked failure has that id.
        """
        low.unwrap_result(self._call("resolve", low._u32("failure_id", failure_id)))

    def failures(self) -> List[FailureRecord]:
        """The tracked failures, oldest first."""
        return [low.lift_failure_record(r) for r in self._call("failures")]

    def patterns(self) -> List[Pattern]:
        """The patterns active now."""
        return [low.lift_pattern(p) for p in self._call("patterns")]

    def ledger(self) -> Ledger:
        """The files-read and files-modified ledger."""
        return low.lift_ledger(self._call("ledger"))

    def stats(self) -> Stats:
        """Counters over the session."""
        return low.lift_stats(self._call("stats"))

    def render(self, template: str, token_budget: Optional[int] = None) -> str:
        """Renders a template by name within the token budget.

        Built-in names: ``recent-failures``, ``recovery``, ``nudge``,
        ``failure-context`` and ``compaction-ledger``. An empty string means
        there is nothing to show. Rendering never changes the session.

        Raises:
            UnknownTemplateError, RenderFailedError
        """
        opts = low._record(token_budget=low._opt_u32("token_budget", token_budget))
        return low.unwrap_result(self._call("render", low._str("template", template), opts))

    def snapshot(self) -> str:
        """The whole session as versioned JSON, for :meth:`restore`."""
        return self._call("snapshot")

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<failmem.Session {state}>"
