"""Adapters that put memstrata under other agent frameworks (each imports its framework
only when it is itself imported, from an optional extra).

* :mod:`memstrata.integrations.langgraph`: ``MemstrataStore``, a LangGraph ``BaseStore``
  (``pip install memstrata[langgraph]``).
"""
