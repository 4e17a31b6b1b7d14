"""A memory whose chat model is the fake server (:mod:`memstrata.llm.fake`) answering a
script, for the curation tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstrata.api import Memory
from memstrata.llm.fake import ByPrompt, fake_openai_server
from memstrata.settings import OpenAILLMSettings, load_settings


@contextmanager
def model_memory(
    data_dir: Path, script: ByPrompt, clock: Any = None, **llm: Any
) -> Iterator[Memory]:
    """A memory whose configured chat model is the fake server answering ``script``."""
    with fake_openai_server(script) as url:
        settings = load_settings(
            data_dir=data_dir,
            load_sample=False,
            llm=OpenAILLMSettings(base_url=url, model="fake", **{"max_retries": 0, **llm}),
        )
        with Memory.open(settings=settings, clock=clock) as mem:
            yield mem
