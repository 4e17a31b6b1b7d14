"""The fake chat model shipped for tests (``memstrata.llm.fake``): as its docstring shows it,
telling every step of memstrata's prompts apart, and never loaded by the package itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memstrata.errors import LLMError
from memstrata.llm.fake import STEP_PROMPTS, ByPrompt, Reply, fake_openai_server, reply
from memstrata.llm.openai_compat import OpenAIChat
from memstrata.llm.prompting import data_messages, load_prompt


@pytest.mark.parametrize("step", sorted(STEP_PROMPTS))
def test_by_prompt_knows_each_step_by_its_prompt(step: str) -> None:
    messages = data_messages(load_prompt(STEP_PROMPTS[step]), {"n": 1})
    assert ByPrompt().step_of({"messages": messages}) == step
    other = [{"role": "system", "content": "You are a pirate."}, messages[1]]
    assert ByPrompt().step_of({"messages": other}) == "unknown"


def test_a_script_per_step_answers_each_in_order_then_its_empty_answer() -> None:
    script = ByPrompt({"audit": [reply(verdicts=[1]), Reply(status=429)]})
    with fake_openai_server(script) as url:
        chat = OpenAIChat(base_url=url, model="fake", max_retries=0)
        audit = data_messages(load_prompt("audit"), {"bullets": ["x"]})
        dedup = data_messages(load_prompt("dedup"), {})
        assert chat.complete_json(audit) == {"verdicts": [1]}
        assert chat.complete_json(dedup) == {"same": []}  # no script: the step's empty answer
        with pytest.raises(LLMError, match="429"):
            chat.complete_json(audit)
    assert script.count("audit") == 2 and script.count("dedup") == 1
    assert script.data("audit", 0) == {"bullets": ["x"]}


def test_the_package_does_not_load_the_fake() -> None:
    src = Path(__file__).resolve().parents[2] / "src"
    code = (
        "import sys, memstrata, memstrata.api, memstrata.cli, memstrata.llm, "
        "memstrata.llm.openai_compat, memstrata.server.http\n"
        "print('memstrata.llm.fake' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.strip() == "False", out.stderr
