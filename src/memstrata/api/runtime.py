"""What every service of the facade works with: one frozen value of the record store, the
raw trace, the clock, the settings, and the two signals a write gives the parts that follow
the store (the background indexer, the curation queue).

Each service takes a :class:`Runtime` in its constructor and nothing else of the facade's
state, so that it can be built and tested with fakes of each part (see
docs/adr/0017-services-of-the-facade.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memstrata.errors import TooLargeError
from memstrata.model import Scope
from memstrata.ports import Clock, RecordStore, TraceSink
from memstrata.settings import DEFAULT_MAX_TURN_CHARS, Settings
from memstrata.textio import check_unicode


def _nothing(scope: Scope) -> None:
    """A signal no part listens to."""


@dataclass(frozen=True, slots=True)
class Runtime:
    store: RecordStore
    trace: TraceSink | None
    clock: Clock
    settings: Settings | None
    #: records of a scope were written: the background indexer (if running) embeds them now
    #: rather than at its next look at the store
    written: Callable[[Scope], None] = _nothing
    #: new turns of a scope: the curation queue (if running) curates it once it is quiet
    touched: Callable[[Scope], None] = _nothing

    @property
    def max_turn_chars(self) -> int:
        """The longest turn (and search query) accepted, in characters."""
        return DEFAULT_MAX_TURN_CHARS if self.settings is None else self.settings.max_turn_chars

    def check_size(self, text: str, what: str) -> None:
        """Refuse ``text`` longer than :attr:`max_turn_chars` as :class:`TooLargeError`, and
        text no store can keep (lone surrogates) as :class:`InvalidInputError`."""
        check_unicode(text, what)
        limit = self.max_turn_chars
        if len(text) > limit:
            raise TooLargeError(
                f"{what} has {len(text)} characters, over the limit of {limit} "
                f"(setting max_turn_chars {limit}); split it or raise the limit",
                limit=limit,
                size=len(text),
            )
