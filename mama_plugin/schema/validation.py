"""Turn raw input into schema models, and pydantic's errors into sentences that say what to fix."""

from __future__ import annotations

from typing import Any, TypeVar

import pydantic

from ..errors import ValidationError

M = TypeVar("M", bound=pydantic.BaseModel)

WHY = (
    "reasoning.primary is required — explain WHY this was decided, with a concrete fact "
    "(e.g. 'token refresh hit the DB at 10K req/s')"
)


def parse(model: type[M], data: Any) -> M:
    """Validate ``data`` as ``model``; raise :class:`ValidationError` listing every problem."""
    if not isinstance(data, dict):
        raise ValidationError([f"expected a JSON object of fields, got {type(data).__name__}"])
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(explain(exc, model)) from None


def explain(exc: pydantic.ValidationError, model: type[pydantic.BaseModel]) -> list[str]:
    """Return one actionable sentence per error, without duplicates, in input order."""
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        line = _sentence(err, model)
        if line not in lines:
            lines.append(line)
    return lines


def _sentence(err: Any, model: type[pydantic.BaseModel]) -> str:
    loc = tuple(err["loc"])
    where = _dotted(loc)
    kind = err["type"]
    given = err.get("input")
    ctx = err.get("ctx") or {}
    about_why = loc[:1] == ("reasoning",) and (loc == ("reasoning",) or loc[-1] == "primary")
    if about_why and kind in {"missing", "string_too_short", "model_type", "model_attributes_type"}:
        return WHY
    is_link = loc[:1] == ("links",) or model.__name__ == "LinkInput"
    if is_link and loc[-1:] == ("reason",) and kind in {"missing", "string_too_short"}:
        return f"{where}: every link needs a reason — say in one sentence why the two are linked"
    if kind == "missing":
        return f"{where} is required"
    if kind in {"greater_than_equal", "less_than_equal", "greater_than", "less_than"}:
        bounds = _bounds(model, loc)
        return f"{where} must be between {bounds} (got {given!r})"
    if kind == "string_too_long":
        limit = ctx.get("max_length")
        return f"{where} is too long ({len(given)} characters; the limit is {limit}) — summarise it"
    if kind == "too_long":
        return f"{where} has too many items (the limit is {ctx.get('max_length')})"
    if kind == "string_too_short":
        return f"{where} must not be empty"
    if kind == "literal_error":
        return f"{where} must be one of {ctx.get('expected')} (got {given!r})"
    if kind == "extra_forbidden":
        return f"{where} is not a known field — check its spelling"
    if kind == "value_error":
        return f"{where}: {ctx.get('error', err['msg'])}"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return f"{where} has the wrong type ({err['msg'].lower()}; got {type(given).__name__})"
    return f"{where}: {err['msg']}"


def _dotted(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + str(part))
    return "".join(parts) or "input"


def _bounds(model: type[pydantic.BaseModel], loc: tuple[Any, ...]) -> str:
    if loc and loc[-1] == "confidence":
        return "0 and 1"
    return "the allowed limits"
