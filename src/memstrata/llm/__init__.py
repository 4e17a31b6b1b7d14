"""Chat models behind :class:`memstrata.ports.LLM`: the OpenAI-compatible adapter and the
helpers every prompt shares (citation numbering, escaping of stored text)."""
