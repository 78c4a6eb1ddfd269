"""BedrockEmbedder: Titan Text Embeddings V2's documented request and response shapes checked by
botocore's Stubber against the real service model, faults a fake cannot express (throttling, a
malformed answer), a real read timeout against a loopback server that never answers, and recall
over records embedded by the local model (another embedding space, never compared)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from typing import Any

import boto3
import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from cairn.changes import Create, NewRecord, Vector
from cairn.embed.bedrock import MODEL_ID, BedrockEmbedder
from cairn.errors import (
    ConfigurationError,
    InvalidModelOutputError,
    ModelRejectedError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from cairn.llm.bedrock import bedrock_runtime_client
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.ports import Embedder
from cairn.recall import RecallPolicy, RecallQuery, recall
from cairn.testing import FixedClock, InMemoryBackend
from tests.unit.model_server import model_server

SCOPE = Scope(memory_id="m1", actor_id="a1")


def _session() -> Any:
    # Static, made-up credentials: requests are signed but never leave the process or loopback.
    return boto3.session.Session(
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",  # noqa: S106 - a fake for a stubbed client
        region_name="us-east-1",
    )


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = bedrock_runtime_client(region="us-east-1", session=_session(), timeout_seconds=10)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _body(payload: Any) -> StreamingBody:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return StreamingBody(io.BytesIO(data), len(data))


def _answer(embedding: Sequence[float], tokens: int = 7) -> dict[str, Any]:
    # Titan v2's documented answer body: the vector, the token count, the same vector by type.
    payload = {
        "embedding": list(embedding),
        "inputTextTokenCount": tokens,
        "embeddingsByType": {"float": list(embedding)},
    }
    return {"body": _body(payload), "contentType": "application/json"}


def _request(text: str, dims: int = 1024, normalize: bool = True) -> dict[str, Any]:
    body = json.dumps({"inputText": text, "dimensions": dims, "normalize": normalize})
    return {
        "modelId": MODEL_ID,
        "body": body,
        "contentType": "application/json",
        "accept": "application/json",
    }


def _axis(index: int, dims: int = 1024, scale: float = 1.0) -> list[float]:
    values = [0.0] * dims
    values[index] = scale
    return values


def test_each_text_is_one_documented_titan_v2_call_and_rows_come_back_in_order(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    texts = ["I prefer green tea", "My sister lives in Lisbon", "I run on Sundays"]
    for i, text in enumerate(texts):
        stubber.add_response("invoke_model", _answer(_axis(i), tokens=5 + i), _request(text))
    embedder = BedrockEmbedder(client)

    rows = embedder.embed(texts)

    assert isinstance(embedder, Embedder)
    assert embedder.identity.model_id == "amazon.titan-embed-text-v2:0"
    assert embedder.identity.dims == 1024
    assert rows.shape == (3, 1024)
    assert rows.dtype == np.float32
    assert [int(np.argmax(row)) for row in rows] == [0, 1, 2]
    assert (embedder.calls, embedder.input_tokens) == (3, 5 + 6 + 7)


def test_the_width_is_configurable_and_is_part_of_the_identity(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    stubber.add_response("invoke_model", _answer(_axis(3, dims=256)), _request("tea", dims=256))
    narrow = BedrockEmbedder(client, dims=256)

    (row,) = narrow.embed(["tea"])

    assert row.shape == (256,)
    assert narrow.identity.dims == 256
    assert narrow.identity.key != BedrockEmbedder(client).identity.key


def test_a_width_titan_does_not_make_is_refused_before_any_call() -> None:
    client = bedrock_runtime_client(region="us-east-1", session=_session(), timeout_seconds=10)
    with pytest.raises(ConfigurationError, match="256, 512, 1024"):
        BedrockEmbedder(client, dims=384)


def test_rows_are_unit_length_even_when_titan_is_asked_not_to_normalise(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    raw = [3.0, 4.0] + [0.0] * 254
    stubber.add_response("invoke_model", _answer(raw), _request("tea", 256, normalize=False))

    (row,) = BedrockEmbedder(client, dims=256, normalize=False).embed(["tea"])

    assert float(np.linalg.norm(row)) == pytest.approx(1.0, abs=1e-6)
    assert row[:2] == pytest.approx([0.6, 0.8])


def test_a_long_text_is_cut_to_max_chars_before_it_is_sent(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    long_text = "word " * 5_000  # 25,000 characters
    sent = long_text.strip()[:8_192]
    stubber.add_response("invoke_model", _answer(_axis(0)), _request(sent))
    stubber.add_response("invoke_model", _answer(_axis(0)), _request("word word"))

    BedrockEmbedder(client).embed([long_text])
    BedrockEmbedder(client, max_chars=9).embed([long_text])


def test_max_chars_past_the_models_own_limit_is_refused() -> None:
    client = bedrock_runtime_client(region="us-east-1", session=_session(), timeout_seconds=10)
    with pytest.raises(ConfigurationError, match="50,000"):
        BedrockEmbedder(client, max_chars=60_000)


def test_an_empty_text_is_a_zero_row_and_costs_no_call(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response("invoke_model", _answer(_axis(1)), _request("tea"))
    embedder = BedrockEmbedder(client)

    rows = embedder.embed(["", "tea", "   \n"])

    assert not rows[0].any()
    assert not rows[2].any()
    assert int(np.argmax(rows[1])) == 1
    assert embedder.calls == 1
    assert embedder.embed([]).shape == (0, 1024)


def test_a_single_string_is_refused_rather_than_embedded_letter_by_letter() -> None:
    client = bedrock_runtime_client(region="us-east-1", session=_session(), timeout_seconds=10)
    with pytest.raises(TypeError):
        BedrockEmbedder(client).embed("tea")


@pytest.mark.parametrize(
    ("code", "error", "retryable"),
    [
        ("ThrottlingException", ModelUnavailableError, True),
        ("ServiceUnavailableException", ModelUnavailableError, True),
        ("InternalServerException", ModelUnavailableError, True),
        ("ModelNotReadyException", ModelUnavailableError, True),
        ("ModelTimeoutException", ModelTimeoutError, True),
        ("AccessDeniedException", ModelRejectedError, False),
        ("ValidationException", ModelRejectedError, False),
        ("ResourceNotFoundException", ModelRejectedError, False),
    ],
)
def test_service_errors_are_translated_by_code(
    stubbed: tuple[Any, Stubber], code: str, error: type[Exception], retryable: bool
) -> None:
    client, stubber = stubbed
    stubber.add_client_error("invoke_model", service_error_code=code, service_message="nope")
    with pytest.raises(error) as raised:
        BedrockEmbedder(client).embed(["tea"])
    assert getattr(raised.value, "retryable", None) is retryable


def test_throttling_stops_the_batch_at_the_failed_text(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response("invoke_model", _answer(_axis(0)), _request("tea"))
    stubber.add_client_error("invoke_model", service_error_code="ThrottlingException")
    embedder = BedrockEmbedder(client)

    with pytest.raises(ModelUnavailableError) as raised:
        embedder.embed(["tea", "coffee", "water"])

    assert raised.value.retryable
    assert embedder.calls == 1  # "water" was never sent: no partial matrix escapes


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>502 Bad Gateway</html>", "not JSON"),
        ({"inputTextTokenCount": 3}, "no 'embedding' list"),
        ({"embedding": "0.1,0.2"}, "no 'embedding' list"),
        ({"embedding": [0.1] * 1536, "inputTextTokenCount": 3}, "1536 values, not 1024"),
        ({"embedding": [None] * 1024}, "not numbers"),
        (b'{"embedding": [NaN' + b", 0.0" * 1023 + b"]}", "not finite"),
    ],
)
def test_a_malformed_answer_is_a_clear_invalid_output_error(
    stubbed: tuple[Any, Stubber], body: Any, reason: str
) -> None:
    client, stubber = stubbed
    stubber.add_response("invoke_model", {"body": _body(body), "contentType": "application/json"})
    with pytest.raises(InvalidModelOutputError, match=reason) as raised:
        BedrockEmbedder(client).embed(["tea"])
    assert not raised.value.retryable


def test_a_client_that_would_wait_longer_than_the_embedder_allows_is_refused() -> None:
    client = bedrock_runtime_client(region="us-east-1", session=_session(), timeout_seconds=60)
    with pytest.raises(ConfigurationError, match="bedrock_runtime_client"):
        BedrockEmbedder(client, timeout_seconds=5)


def test_the_wire_request_is_titans_and_a_stalled_call_is_a_retryable_timeout() -> None:
    with model_server() as server:
        server.reply(200, {"embedding": _axis(2), "inputTextTokenCount": 2})
        server.stall()
        client = bedrock_runtime_client(
            region="us-east-1", session=_session(), timeout_seconds=0.3, endpoint_url=server.url
        )
        embedder = BedrockEmbedder(client, timeout_seconds=0.3)
        (row,) = embedder.embed(["green tea"])
        with pytest.raises(ModelTimeoutError) as raised:
            embedder.embed(["coffee"])

    assert int(np.argmax(row)) == 2
    assert server.requests[0] == {"inputText": "green tea", "dimensions": 1024, "normalize": True}
    assert server.paths[0] == "/model/amazon.titan-embed-text-v2%3A0/invoke"
    assert raised.value.retryable
    assert len(server.requests) == 2  # botocore's retries are off: one call, one bound


# Recall over records embedded by the local model: Titan's space has another identity, so the
# stored MiniLM vectors are never compared with a Titan query vector.

TEA = "The user drinks green tea every morning"
LISBON = "The user's sister lives in Lisbon"


@pytest.fixture(scope="module")
def onnx() -> Embedder:
    pytest.importorskip("onnxruntime", reason="needs the onnx extra")
    from cairn.embed.onnx import OnnxEmbedder

    return OnnxEmbedder()


def _remember_with_onnx(
    stores: Any, onnx: Embedder, contents: list[str]
) -> dict[str, RecordVersion]:
    rows = onnx.embed(contents)
    created: dict[str, RecordVersion] = {}
    for content, row in zip(contents, rows, strict=True):
        vector = Vector(embedder=onnx.identity, values=tuple(float(x) for x in row))
        record = NewRecord(
            namespace="/facts/a1/",
            content=content,
            sources=(Source(kind=SourceKind.USER),),
            vector=vector,
        )
        (version,) = stores.records.apply(SCOPE, [Create(record=record)])
        created[content] = version
    return created


@pytest.mark.onnx
def test_recall_with_titan_over_onnx_records_re_embeds_them_and_never_mixes_spaces(
    stubbed: tuple[Any, Stubber], onnx: Embedder
) -> None:
    client, stubber = stubbed
    clock = FixedClock()
    stores = InMemoryBackend(clock).stores()
    created = _remember_with_onnx(stores, onnx, [TEA, LISBON])
    # The query shares no word with either record, so only Titan's vectors can find the tea;
    # heads with equal keyword scores are re-embedded in record-id order.
    query = "beverage preference"
    stubber.add_response("invoke_model", _answer(_axis(0)), _request(query))
    for content in sorted(created, key=lambda c: created[c].record_id):
        answer = _answer(_axis(0 if content == TEA else 1))
        stubber.add_response("invoke_model", answer, _request(content))

    result = recall(
        SCOPE,
        RecallQuery(text=query),
        stores=stores,
        embedder=BedrockEmbedder(client),
        clock=clock,
        journal=False,
    )

    assert [entry.version.content for entry in result.entries] == [TEA]
    assert result.entries[0].cosine == pytest.approx(1.0)
    assert result.counts.reembedded == 2
    assert not result.counts.used_keyword_fallback
    refs = [created[TEA].ref]
    assert len(stores.records.vectors(SCOPE, refs, onnx.identity)[created[TEA].ref]) == 384


@pytest.mark.onnx
def test_recall_with_titan_and_no_re_embedding_budget_falls_back_to_keywords(
    stubbed: tuple[Any, Stubber], onnx: Embedder
) -> None:
    client, stubber = stubbed
    clock = FixedClock()
    stores = InMemoryBackend(clock).stores()
    _remember_with_onnx(stores, onnx, [TEA, LISBON])
    query = "where does the sister live"
    stubber.add_response("invoke_model", _answer(_axis(0)), _request(query))  # the query only

    result = recall(
        SCOPE,
        RecallQuery(text=query),
        stores=stores,
        embedder=BedrockEmbedder(client),
        clock=clock,
        policy=RecallPolicy(max_reembed=0),
        journal=False,
    )

    assert [entry.version.content for entry in result.entries] == [LISBON]
    assert result.entries[0].cosine is None
    assert result.counts.used_keyword_fallback
    assert result.counts.unembedded == 2
