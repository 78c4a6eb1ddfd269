"""Model providers behind one port, ``cairn.ports.ModelProvider``.

- ``request``: what a call asks for and what it returns (``ModelRequest``, ``ModelResponse``).
- ``bedrock``: Amazon Bedrock Converse through an injected ``bedrock-runtime`` client.
- ``openai_compat``: any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server).
- ``heuristic``: the offline default; rules for explicit statements, no model at all.
- ``scripted``: queued answers for tests (exported by ``cairn.testing``).
- ``structured``: one call for validated structured output, retried once when invalid.

Importing the package imports no provider: ``bedrock`` needs botocore (the ``aws`` extra).
"""
