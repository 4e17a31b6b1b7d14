"""What rules did because the chat model could not: read from a curation run's reports.

Extraction and consolidation never fail because of the model: a step it could not do (the
server unreachable, a timeout, a malformed reply twice, a spent token budget, a reply the
guards refused whole) is recorded as ``where: what went wrong`` and done by rules
(:func:`memstrata.llm.metered.ask`, :mod:`memstrata.curate.extract_llm`,
:mod:`memstrata.consolidate.by_model`). :func:`model_fallback` sums those records up for a
person: which steps, the first error in one line, and that rules did the work instead; every
front door says it (the CLI on stderr, a run's report as ``fallback``, the workbench's run view).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memstrata.model import JsonValue

#: the longest error a summary quotes, in characters
MAX_ERROR_CHARS: Final = 240
#: what the LLM extractor adds after a chunk it handed to its fallback
_HANDED_OVER: Final = re.compile(r": extracted by [^:]+$")
#: a model given up on for this run after failing in a row: the cause is the error before it
_GIVEN_UP: Final = "the model failed "


@dataclass(frozen=True, slots=True)
class ModelFallback:
    """Steps the chat model could not do, done by rules instead."""

    steps: tuple[str, ...]
    error: str

    def to_json(self) -> dict[str, JsonValue]:
        return {"steps": list(self.steps), "error": self.error, "done_by": "rules"}

    def message(self) -> str:
        """One line for a person."""
        return (
            f"the chat model failed at {', '.join(self.steps)}: {self.error}; "
            "rules did that work instead"
        )


def model_fallback(
    extraction_failures: Sequence[str] = (), consolidation_failures: Sequence[str] = ()
) -> ModelFallback | None:
    """The summary of a run's model failures (an extraction report's ``failures``, a
    consolidation report's ``model_failures``), or None when the model did every step."""
    steps: list[str] = []
    errors: list[str] = []
    for entry in extraction_failures:
        if _HANDED_OVER.search(entry):
            continue
        _, error = _split(entry)
        _add(steps, "extract")
        errors.append(error)
    for entry in consolidation_failures:
        where, error = _split(entry)
        _add(steps, where)
        errors.append(error)
    if not steps:
        return None
    causes = [e for e in errors if not e.startswith(_GIVEN_UP)] or errors
    return ModelFallback(tuple(steps), _one_line(causes[0]))


def _split(entry: str) -> tuple[str, str]:
    where, sep, error = entry.partition(": ")
    return (where, error) if sep else ("model", entry)


def _add(steps: list[str], step: str) -> None:
    if step not in steps:
        steps.append(step)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_ERROR_CHARS else flat[: MAX_ERROR_CHARS - 1] + "…"
