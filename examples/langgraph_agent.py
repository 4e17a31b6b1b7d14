"""A LangGraph agent that remembers a user across threads, with memstrata as its store.

Thread 1: the user tells the agent something worth keeping; the agent stores it under the
namespace ``(user, "memories")``. Thread 2, a new conversation with no shared messages: the
agent searches that namespace for what bears on the question and puts it in its prompt.

The chat model is scripted (no network, no key): swap ``ScriptedChatModel`` for any LangChain
chat model (``ChatOpenAI``, ``ChatOllama``...) to run it for real.

    pip install 'memstrata[langgraph]'
    python examples/langgraph_agent.py ./agent-memory
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore
from pydantic import Field

from memstrata import Memory
from memstrata.integrations.langgraph import MemstrataStore


class ScriptedChatModel(BaseChatModel):
    """Answers from a script, in order, and keeps every prompt it was given."""

    replies: list[str]
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        reply = self.replies[len(self.prompts) - 1]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def build_agent(model: BaseChatModel, store: BaseStore) -> Any:
    """One node: recall what the store holds about the user, answer, keep what was asked."""

    def respond(state: MessagesState, config: RunnableConfig, *, store: BaseStore) -> Any:
        user = config["configurable"]["user_id"]
        namespace = (user, "memories")
        said = str(state["messages"][-1].content)
        memories = store.search(namespace, query=said, limit=3)
        known = "\n".join(f"- {m.value['text']}" for m in memories) or "- (nothing yet)"
        if said.lower().startswith("remember"):
            store.put(namespace, str(uuid.uuid4()), {"text": said})
        system = SystemMessage(f"You are a helpful assistant. You remember:\n{known}")
        return {"messages": [model.invoke([system, *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("respond", respond)
    graph.add_edge(START, "respond")
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def run(data_dir: str | Path, model: ScriptedChatModel | None = None) -> list[str]:
    """Two threads of one user; the agent's answers."""
    model = model or ScriptedChatModel(
        replies=["Noted: no peanuts for you.", "Try the sesame-free rice crackers, peanut-free."]
    )
    answers = []
    with Memory.open(data_dir) as memory:
        agent = build_agent(model, MemstrataStore(memory))
        turns: Sequence[tuple[str, str]] = [
            ("thread-1", "Remember that I am allergic to peanuts."),
            ("thread-2", "Which snack should I buy for the train?"),
        ]
        for thread, text in turns:
            config = {"configurable": {"thread_id": thread, "user_id": "alice"}}
            state = agent.invoke({"messages": [{"role": "user", "content": text}]}, config)
            answers.append(str(state["messages"][-1].content))
    return answers


if __name__ == "__main__":
    for answer in run(sys.argv[1] if len(sys.argv) > 1 else "./agent-memory"):
        print(answer)
