"""Text sources, the train / held-out split, and packing documents into fixed-length sequences.

Every source is an iterator of documents (strings). Documents are split into training and
held-out text by a hash of their text (:func:`is_held_out`), the same rule for every source, so
the split needs no index and works on a stream. Packing (:func:`pack`) tokenises documents,
joins them with the end-of-text token and cuts the token stream into sequences of ``seq_len``
tokens, dropping the incomplete tail.

Local sources (the data directory, see each ``SOURCE.md``):

* ``webtext``: clean English web documents only: the two C4-en samples (complete documents),
  the two CCNet "head" English files and the 1,408 complete OpenAI WebText documents. Left out:
  raw Common Crawl (noisy, multilingual), the C4 prefix/continuation file (truncated documents,
  possibly overlapping the C4 samples) and the WebText valid/test files (short prefixes only).
* ``wikitext-2``: ``wiki.test.raw`` (WikiText-2 raw), cut into articles at its top-level
  ``= Title =`` lines. The train split is not in the mirror and is not needed: this is
  out-of-distribution evaluation text only.

Remote sources (streamed through ``datasets``, for the ``paper`` profile):

* ``fineweb-edu``: ``HuggingFaceFW/fineweb-edu``, configuration ``sample-10BT``.
* ``wikipedia``: ``wikimedia/wikipedia``, ``20231101.en`` (the paper's "Wikipedia" set is not
  specified further; WikiText's test split is too small for 1000 windows of 1024 tokens).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import torch
from torch import Tensor
from ssa_book import data

WEBTEXT_FILES = (
    "c4/c4_en_train00000_head1000.jsonl",
    "c4/c4_en_olmo_fixture_sample1000.jsonl",
    "ccnet/cc_en_head-0091.jsonl",
    "ccnet/cc_en_head-0174.jsonl",
    "gpt2_webtext/webtext.train.first1408.jsonl",
)
WIKITEXT_FILE = "wiki.test.raw"
FINEWEB_EDU = ("HuggingFaceFW/fineweb-edu", "sample-10BT")
WIKIPEDIA = ("wikimedia/wikipedia", "20231101.en")
_WIKITEXT_TITLE = re.compile(r"^ = [^=].* = $")


def is_held_out(text: str, per_mille: int) -> bool:
    """Whether a document belongs to the held-out split: a stable hash of its text, so the
    same document lands on the same side in every process, run and source."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % 1000 < per_mille


def read_jsonl(path: Path) -> Iterator[str]:
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            if line.strip():
                yield json.loads(line)["text"]


def read_text_documents(path: Path) -> Iterator[str]:
    """A .txt file whose documents are separated by blank lines."""
    text = Path(path).read_text(encoding="utf-8").replace("\r\n", "\n")
    for document in re.split(r"\n\s*\n", text):
        if document.strip():
            yield document.strip()


def wikitext_articles(path: Path) -> Iterator[str]:
    """WikiText raw files hold articles one after another, each opened by a ``= Title =`` line."""
    lines = path.read_text(encoding="utf-8").replace("\r\n", "\n").split("\n")
    article: list[str] = []
    for line in lines:
        if _WIKITEXT_TITLE.match(line) and any(part.strip() for part in article):
            yield "\n".join(article).strip()
            article = []
        article.append(line)
    if any(part.strip() for part in article):
        yield "\n".join(article).strip()


def _stream_hf(name: tuple[str, str], rank: int, world_size: int) -> Iterator[str]:
    try:
        from datasets import load_dataset
        from datasets.distributed import split_dataset_by_node

        stream = load_dataset(name[0], name=name[1], split="train", streaming=True)
        # Each process reads its own shard of the stream: no process tokenises another's text.
        for row in split_dataset_by_node(stream, rank=rank, world_size=world_size):
            yield row["text"]
    except (ConnectionError, OSError) as error:
        raise RuntimeError(
            f"data: could not stream {name[0]} ({name[1]}) from the Hugging Face Hub: {error}. "
            "This source needs internet access; offline, use train_source='webtext' (profile cpu)"
        ) from error


def documents(source: str, *, rank: int = 0, world_size: int = 1) -> Iterator[str]:
    """All documents of ``source`` (both splits). ``rank``/``world_size`` shard remote streams."""

    if source == "webtext":
        folder = data.path("webtext")
        return itertools.chain.from_iterable(read_jsonl(folder / name) for name in WEBTEXT_FILES)
    if source == "wikitext-2":
        return wikitext_articles(data.path("wikitext-2") / WIKITEXT_FILE)
    if source == "fineweb-edu":
        return _stream_hf(FINEWEB_EDU, rank, world_size)
    if source == "wikipedia":
        return _stream_hf(WIKIPEDIA, rank, world_size)
    path = Path(source)
    if path.suffix in (".jsonl", ".txt"):
        if not path.is_file():
            raise ValueError(
                f"source: no file {path}; give an existing .jsonl/.txt file or one of webtext, wikitext-2, fineweb-edu, wikipedia"
            )
        return read_jsonl(path) if path.suffix == ".jsonl" else read_text_documents(path)
    raise ValueError(
        f"source must be webtext, wikitext-2, fineweb-edu, wikipedia or a .jsonl/.txt path; got {source!r}"
    )


def split_documents(source: str, split: str, per_mille: int, limit: int | None = None, **shard) -> Iterator[str]:
    """The ``"train"`` or ``"held_out"`` documents of ``source`` (the first ``limit`` of them).

    ``limit`` counts documents of the source before the split, so the train and held-out sides
    of a limited source are disjoint parts of the same documents."""
    if split not in ("train", "held_out", "all"):
        raise ValueError(f"split must be train, held_out or all; got {split!r}")
    selected = itertools.islice(documents(source, **shard), limit)
    if split == "all":
        return selected
    want_held_out = split == "held_out"
    return (text for text in selected if is_held_out(text, per_mille) == want_held_out)


def token_stream(texts: Iterable[str], tokenizer, batch_documents: int = 256) -> Iterator[int]:
    """Token ids of every document, each followed by the end-of-text token."""
    end = tokenizer.eos_token_id
    texts = iter(texts)
    while batch := list(itertools.islice(texts, batch_documents)):
        for ids in tokenizer(batch, add_special_tokens=False)["input_ids"]:
            yield from ids
            yield end


def pack(texts: Iterable[str], tokenizer, seq_len: int, max_sequences: int | None = None) -> Iterator[Tensor]:
    """Sequences of exactly ``seq_len`` token ids cut from the joined documents."""
    stream = token_stream(texts, tokenizer)
    produced = 0
    while max_sequences is None or produced < max_sequences:
        chunk = list(itertools.islice(stream, seq_len))
        if len(chunk) < seq_len:
            return
        produced += 1
        yield torch.tensor(chunk, dtype=torch.long)


def packed_tensor(
    texts: Iterable[str], tokenizer, seq_len: int, max_sequences: int | None = None, *, what: str, minimum: int = 1
) -> Tensor:
    """``pack`` into one ``(sequences, seq_len)`` tensor; at least ``minimum`` sequences or an error."""
    sequences = list(pack(texts, tokenizer, seq_len, max_sequences))
    if len(sequences) < minimum:
        raise ValueError(
            f"corpus: the {what} text gives {len(sequences)} sequences of {seq_len} tokens, fewer than the "
            f"{minimum} needed; use a larger corpus (more documents), a shorter seq_len or a smaller batch"
        )
    return torch.stack(sequences)


class GlobalBatches:
    """Training batches from an in-memory ``(N, seq_len)`` tensor, by step number.

    Step ``s`` takes sequences ``[s*G, (s+1)*G)`` of an endless stream of seeded permutations
    (one per epoch), so a batch depends only on the step: resuming is exact, and process
    ``rank`` of ``world_size`` takes its contiguous share, so any number of processes sees the
    same global batch.
    """

    def __init__(self, sequences: Tensor, global_batch: int, seed: int, rank: int = 0, world_size: int = 1):
        if global_batch % world_size:
            raise ValueError(
                f"global_batch ({global_batch}) must be a multiple of the number of processes ({world_size})"
            )
        if len(sequences) < global_batch:
            raise ValueError(
                f"corpus: {len(sequences)} training sequences, fewer than one global batch ({global_batch}); "
                "use a larger corpus or a smaller global_batch"
            )
        self.sequences, self.global_batch, self.seed = sequences, global_batch, seed
        self.local = global_batch // world_size
        self.rank = rank
        self._epoch, self._order = -1, None

    def _order_of(self, epoch: int) -> Tensor:
        if epoch != self._epoch:
            generator = torch.Generator().manual_seed(self.seed * 100_003 + epoch)
            self._epoch, self._order = epoch, torch.randperm(len(self.sequences), generator=generator)
        return self._order

    def local_batch(self, step: int) -> Tensor:
        """This process's ``(global_batch / world_size, seq_len)`` share of step ``step``."""
        start = step * self.global_batch + self.rank * self.local
        positions = range(start, start + self.local)
        count = len(self.sequences)
        indices = torch.stack([self._order_of(position // count)[position % count] for position in positions])
        return self.sequences[indices]


class StreamedBatches:
    """Training batches packed on the fly from a sharded document stream (FineWeb-Edu).

    Each process packs its own shard, so the global batch is the union of the local ones.
    Resuming re-reads the stream up to the step (tokenising without training: about half an
    hour per process at the end of the paper's run)."""

    def __init__(self, texts: Iterable[str], tokenizer, seq_len: int, local_batch: int):
        self._sequences = pack(texts, tokenizer, seq_len)
        self.local, self._next_step = local_batch, 0

    def local_batch(self, step: int) -> Tensor:
        if step < self._next_step:
            raise ValueError(f"step: a stream cannot go back (asked {step}, next is {self._next_step})")
        for _ in range((step - self._next_step) * self.local):
            next(self._sequences)
        batch = list(itertools.islice(self._sequences, self.local))
        if len(batch) < self.local:
            raise ValueError("corpus: the training stream ended; use fewer steps or more data")
        self._next_step = step + 1
        return torch.stack(batch)


def unigram_perplexity(counts: Tensor, held_out: Tensor) -> float:
    """Perplexity on ``held_out`` windows (the positions a language model predicts) of the
    add-one-smoothed unigram distribution with token ``counts``: the baseline a model must
    beat by far to have learned anything beyond word frequencies."""
    smoothed = counts.double() + 1.0
    log_probability = smoothed.log() - smoothed.sum().log()
    return float(torch.exp(-log_probability[held_out[:, 1:].flatten()].mean()))
