"""``HeuristicModel``: the offline provider. No model, no download, no network.

It knows no caller: it is given ``responders``, one per structured-output schema name it
answers (``ModelRequest.output.name``), and each reads the request's document and answers by
rule. The features bring their own (``cairn.extract.offline_rules`` for extraction and formation,
``cairn.consolidate.offline_rules`` for consolidation); ``cairn.local.offline_model`` composes
them into the offline default the embedded system and ``cairn serve`` use.

The provider does what any model would around the answer: it honours ``max_output_tokens``
(dropping items from the end of the answer, as a model stopping early would), wraps the items
in their document (``{key: items}``), and reports one call. A request for a schema it has no
responder for, or whose document a responder cannot read, is a ``ConfigurationError``:
configure a real model (``cairn.llm.bedrock``, ``cairn.llm.openai_compat``) for it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cairn.errors import ConfigurationError
from cairn.model_request import ModelRequest, ModelResponse, ModelUsage

HEURISTIC_MODEL_ID = "cairn-heuristic-v1"
# Token estimate for honouring max_output_tokens: about four characters a token.
_CHARS_PER_TOKEN = 4

Document = TypeVar("Document", bound=BaseModel)


@dataclass(frozen=True)
class Responder:
    """How to answer one schema: ``answer`` reads the request's document (the first message's
    text) and returns the answer's items, which the provider puts under ``key``."""

    key: str
    answer: Callable[[str], list[dict[str, Any]]]


def read_document(model: type[Document], text: str) -> Document:
    """The request's document as ``model``; a ``ConfigurationError`` if it is not one."""
    try:
        return model.model_validate_json(text)
    except ValidationError:
        raise ConfigurationError(
            "the offline heuristic provider was sent a request it cannot read; it answers "
            "only the documents cairn's own prompts build"
        ) from None


class HeuristicModel:
    """Answers by rule the requests whose schema name has a responder in ``responders``; any
    other request raises ``ConfigurationError`` (configure a real model provider for it)."""

    def __init__(self, responders: Mapping[str, Responder]) -> None:
        self._responders = dict(responders)

    @property
    def schemas(self) -> frozenset[str]:
        """The schema names this provider answers."""
        return frozenset(self._responders)

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.monotonic()
        name = request.output.name if request.output is not None else None
        responder = self._responders.get(name) if name is not None else None
        if responder is None:
            raise ConfigurationError(
                "the offline heuristic provider answers only cairn's own requests "
                f"({', '.join(sorted(self._responders)) or 'none configured'}); configure a "
                "model provider (Bedrock or an OpenAI-compatible server) for anything else"
            )
        answer = responder.answer(request.messages[0].text)
        while answer and _tokens(answer, responder.key) > request.max_output_tokens:
            answer = answer[:-1]  # honour the output bound as a model would: stop early
        document = json.dumps({responder.key: answer}, ensure_ascii=False)
        return ModelResponse(
            text=document,
            usage=ModelUsage(calls=1, input_tokens=0, output_tokens=0),
            model_id=HEURISTIC_MODEL_ID,
            latency_ms=int((time.monotonic() - started) * 1000),
        )


def _tokens(answer: list[dict[str, Any]], key: str) -> int:
    return len(json.dumps({key: answer})) // _CHARS_PER_TOKEN + 1
