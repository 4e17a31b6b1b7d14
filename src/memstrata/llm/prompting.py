"""What every prompt that shows stored text shares.

* Episodes are shown to the model as small integers (``[1]``, ``[2]`` ...) and the numbers it
  cites are mapped back to episode ids; numbers it invents are dropped and counted.
* Stored text is data, not instructions: it is embedded as JSON string literals
  (:func:`memstrata.render.inert_json`) inside a block whose delimiters it cannot produce, so a
  turn saying "ignore previous instructions" or closing the block stays inert.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources

from memstrata.model import Episode, JsonValue
from memstrata.ports import ChatMessage
from memstrata.render import inert_json


def load_prompt(name: str) -> str:
    """A system prompt shipped with memstrata (``memstrata/llm/prompts/<name>.md``)."""
    return resources.files("memstrata.llm").joinpath(f"prompts/{name}.md").read_text("utf-8")


def data_messages(prompt: str, data: Mapping[str, JsonValue]) -> list[ChatMessage]:
    """The system ``prompt``, then ``data`` as the user message: one JSON object between
    ``<input>`` markers that nothing inside it can close."""
    return [
        {"role": "system", "content": prompt},
        {"role": "user", "content": f"<input>\n{inert_json(data)}\n</input>"},
    ]


@dataclass(slots=True)
class CitationMap:
    """Small integers for the episodes a prompt shows, and the way back."""

    episodes: list[Episode] = field(default_factory=list)
    dropped: int = 0

    def number(self, episode: Episode) -> int:
        self.episodes.append(episode)
        return len(self.episodes)

    def resolve(self, numbers: Iterable[object]) -> list[str]:
        """Episode ids for the cited numbers; anything else is dropped and counted."""
        out: list[str] = []
        for raw in numbers:
            n = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
            if isinstance(raw, str) and raw.strip().lstrip("[").rstrip("]").isdigit():
                n = int(raw.strip().lstrip("[").rstrip("]"))
            if n is None or not 1 <= n <= len(self.episodes):
                self.dropped += 1
                continue
            episode_id = self.episodes[n - 1].id
            if episode_id not in out:
                out.append(episode_id)
        return out


def episodes_block(episodes: Sequence[Episode], citations: CitationMap) -> str:
    """The episodes as a JSON-lines block the model can cite by number.

    Each line is ``{"n": 1, "speaker": "...", "role": "user", "time": "...", "text": "..."}``
    (``role``: user, assistant, system, tool or other, so a model can tell what a person said
    from what the assistant answered); every string is a JSON literal, so no stored text can
    end the block or look like an instruction line."""
    lines = []
    for episode in episodes:
        n = citations.number(episode)
        record = {
            "n": n,
            "speaker": episode.speaker,
            "role": episode.role.value,
            "time": episode.time.date().isoformat(),
            "text": episode.text,
        }
        lines.append(inert_json(record))
    return "<episodes>\n" + "\n".join(lines) + "\n</episodes>"
