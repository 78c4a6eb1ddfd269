"""``ScriptedModel``: a model provider for tests that answers from a queue and records requests.

Queue answer texts, whole ``ModelResponse`` values, exceptions (raised when their turn comes:
``ModelTimeoutError(...)`` is how a test times a call out without waiting), or callables that
compute the answer from the request. Every request is kept in ``requests``, so a test can read
exactly what the model was shown.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from cairn.errors import ConfigurationError
from cairn.model_request import ModelRequest, ModelResponse, ModelUsage, StopReason

Answer = str | ModelResponse | BaseException | Callable[[ModelRequest], "str | ModelResponse"]

SCRIPTED_MODEL_ID = "cairn-scripted"


class ScriptedModel:
    """Answers requests in order from ``answers``; raises queued exceptions in their turn.

    A call with nothing left in the queue raises ``ConfigurationError`` naming the call, so a
    test that makes one call more than it scripted fails loudly instead of hanging.
    """

    def __init__(self, answers: Iterable[Answer] = ()) -> None:
        self._answers: deque[Answer] = deque(answers)
        self.requests: list[ModelRequest] = []

    def queue(self, *answers: Answer) -> None:
        """Append answers to the end of the queue."""
        self._answers.extend(answers)

    @property
    def remaining(self) -> int:
        return len(self._answers)

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if not self._answers:
            raise ConfigurationError(
                f"ScriptedModel has no answer queued for call {len(self.requests)}; "
                "queue one with ScriptedModel.queue"
            )
        answer = self._answers.popleft()
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            answer = answer(request)
        if isinstance(answer, ModelResponse):
            return answer
        return ModelResponse(
            text=answer,
            usage=ModelUsage(
                calls=1,
                input_tokens=_estimated_tokens(request),
                output_tokens=max(1, len(answer) // 4),
            ),
            model_id=SCRIPTED_MODEL_ID,
            latency_ms=0,
            stop_reason=StopReason.END,
        )


def _estimated_tokens(request: ModelRequest) -> int:
    """About four characters a token: enough for tests that add usage up."""
    return max(1, (len(request.system) + sum(len(m.text) for m in request.messages)) // 4)
