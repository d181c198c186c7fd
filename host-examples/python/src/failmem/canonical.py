"""Canonical JSON (``tests/README.md``) for failmem values, both ways.

* :func:`to_json_value` turns a result (a dataclass from :mod:`failmem.types`,
  an enum, a list, a scalar, ``None`` or a :class:`FailmemError`) into plain
  JSON data: records become dicts with kebab-case keys in WIT declaration
  order, enums their case names, errors ``{"error": case, "payload": p}``.
* :func:`dumps` is the canonical text: compact, UTF-8, ``JSON.stringify``
  escapes (``json.dumps(v, separators=(",", ":"), ensure_ascii=False)``).
* :func:`outcome_from_json` and :func:`config_from_json` read canonical
  (kebab-case) vector objects back into inputs.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, Dict, Mapping

from ._engine import args_text
from .errors import FailmemError
from .types import Config, HostRule, TemplateSource, ToolOutcome

__all__ = ["to_json_value", "dumps", "canonical", "outcome_from_json", "config_from_json"]


def to_json_value(value: Any) -> Any:
    """Plain JSON data for a failmem value, with canonical key order."""
    if isinstance(value, FailmemError):
        return value.to_json()
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name.replace("_", "-"): to_json_value(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json_value(v) for k, v in value.items()}
    return value


def dumps(data: Any) -> str:
    """Compact JSON text of plain data, as ``JSON.stringify`` writes it."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def canonical(value: Any) -> str:
    """The canonical JSON text of a failmem value."""
    return dumps(to_json_value(value))


def _string_field(obj: Mapping[str, Any], key: str) -> str:
    v = obj.get(key)
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    return dumps(v)


def outcome_from_json(obj: Mapping[str, Any]) -> ToolOutcome:
    """A vector's ``outcome`` (a WIT ``tool-outcome`` in kebab-case) as a :class:`ToolOutcome`.

    Absent strings are ``""`` and absent options ``None``; a non-string
    ``args`` is serialized as compact JSON.
    """
    return ToolOutcome(
        tool=_string_field(obj, "tool"),
        args=args_text(obj.get("args")),
        output=_string_field(obj, "output"),
        exit_code=obj.get("exit-code"),
        is_error=obj.get("is-error"),
    )


_CONFIG_KEYS = {f.name.replace("_", "-"): f.name for f in dataclasses.fields(Config)}


def config_from_json(obj: Mapping[str, Any]) -> Config:
    """A WIT ``config`` record in canonical JSON (kebab-case keys) as a :class:`Config`.

    Raises:
        ValueError: on an unknown key (e.g. a snake_case one).
    """
    kwargs: Dict[str, Any] = {}
    for key, val in obj.items():
        name = _CONFIG_KEYS.get(key)
        if name is None:
            raise ValueError(f"unknown config field {key!r} (fields are {', '.join(_CONFIG_KEYS)})")
        if name == "rules" and val is not None:
            val = [
                HostRule(
                    id=r.get("id", ""),
                    tools=list(r.get("tools") or []),
                    pattern=r.get("pattern", ""),
                    category=r.get("category", ""),
                    suggestion=r.get("suggestion"),
                )
                for r in val
            ]
        elif name == "templates" and val is not None:
            val = [TemplateSource(name=t.get("name", ""), source=t.get("source", "")) for t in val]
        kwargs[name] = val
    return Config(**kwargs)
