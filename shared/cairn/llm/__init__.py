"""Model providers behind one port, ``cairn.ports.ModelProvider``.

- ``bedrock``: Amazon Bedrock Converse through an injected ``bedrock-runtime`` client.
- ``openai_compat``: any OpenAI-compatible chat endpoint (Ollama, vLLM, llama.cpp server).
- ``heuristic``: the offline provider, answering by the rules its caller gives it (no model at
  all); ``cairn.local.offline_model`` gives it extraction's and consolidation's.
- ``scripted``: queued answers for tests (exported by ``cairn.testing``).
- ``structured``: one call for validated structured output, retried once when invalid.

What a call asks for and returns (``ModelRequest``, ``ModelResponse``) is core:
``cairn.model_request``. No provider imports a feature (extract, consolidate).
Importing the package imports no provider: ``bedrock`` needs botocore (the ``aws`` extra).
"""
