"""AO-CHILDES: American-English child-directed speech, ordered by the age of the child.

The data directory holds the raw CHILDES ``Eng-NA`` exports that the AO-CHILDES toolkit
(Huebner & Willits 2021) starts from: one CSV per corpus, one row per utterance. This module
turns them into the training corpus, following AO-CHILDES' default filters, and documents
every cleaning rule in :data:`CLEANING_RULES` (the chapter prints that table).

    corpus = load_corpus()                      # from ssa_book.data.path("aochildes")
    corpus.utterances[0]                        # 'what's that ?'
    corpus.summary()                            # counts the chapter glues
"""

from __future__ import annotations

import csv
import dataclasses
import math
from collections import Counter
from pathlib import Path

from ssa_book import data

TRANSCRIPT_FOLDER = "original_transcripts"
# AO-CHILDES drops the target child and other children: only speech *to* children is kept.
EXCLUDED_SPEAKER_ROLES = ("Target_Child", "Child")
COLLECTION = "Eng-NA"
MAX_AGE_DAYS = 6 * 365  # AO-CHILDES keeps children up to 6 years (2190 days); unknown ages kept
# CHILDES codes for material that was not transcribed: unintelligible (xxx), phonological
# rendering of unintelligible speech (yyy), untranscribed stretch (www).
UNTRANSCRIBABLE = frozenset({"xxx", "yyy", "www"})
# CHILDES joins compounds and multi-word lexical units with '+' and '_' (ice+cream, Big_Bird).
COMPOUND_JOINERS = ("+", "_")
# The gloss has no end punctuation; the utterance type says what it was. Zorro sentences end
# with ' .' or ' ?', so we append the same kind of token.
QUESTION_TYPES = frozenset({"question", "trail off question", "interruption question", "self interruption question"})
EXCLAMATION_TYPES = frozenset({"imperative_emphatic"})
REQUIRED_COLUMNS = (
    "gloss",
    "speaker_role",
    "target_child_age",
    "type",
    "collection_name",
    "transcript_id",
    "utterance_order",
)

CLEANING_RULES = (
    ("speaker", f"drop rows whose speaker_role is {' or '.join(EXCLUDED_SPEAKER_ROLES)} (child-directed speech only)"),
    ("collection", f"keep rows of the {COLLECTION} collection only (drops Clinical-MOR rows)"),
    (
        "age",
        f"drop rows whose target child is older than {MAX_AGE_DAYS} days; rows of unknown age are kept and placed last",
    ),
    (
        "untranscribable",
        f"drop the whole utterance if it contains {', '.join(sorted(UNTRANSCRIBABLE))} (not transcribed; removing only the marker would leave a broken sentence)",
    ),
    ("compounds", "split CHILDES compounds at '+' and '_' (ice+cream -> ice cream, Big_Bird -> Big Bird)"),
    ("empty", "drop utterances with no words left"),
    ("punctuation", "append ' ?' to questions, ' !' to emphatic imperatives and ' .' to all other utterance types"),
    ("order", "sort by target child age (days), then transcript id, then utterance order"),
)


class CorpusError(ValueError):
    """The transcript folder or one of its files cannot be read as AO-CHILDES."""


@dataclasses.dataclass(frozen=True)
class Corpus:
    utterances: tuple[str, ...]  # cleaned, with end punctuation, ordered by age
    ages_days: tuple[float, ...]  # NaN when the transcript gives no age
    corpus_names: tuple[str, ...]  # the CHILDES corpus (CSV file stem) of each utterance
    dropped: dict  # rule name -> number of rows it removed

    def summary(self) -> dict:
        """The numbers the chapter reports: utterances, words, corpora and the age range."""
        known_ages = [age for age in self.ages_days if not math.isnan(age)]
        per_corpus = Counter(self.corpus_names)
        return {
            "utterances": len(self.utterances),
            "words": sum(count_words(utterance) for utterance in self.utterances),
            "corpora": len(per_corpus),
            "utterances_per_corpus": dict(sorted(per_corpus.items())),
            "min_age_days": min(known_ages) if known_ages else None,
            "max_age_days": max(known_ages) if known_ages else None,
            "unknown_age_utterances": len(self.ages_days) - len(known_ages),
            "dropped": dict(self.dropped),
        }


def count_words(utterance: str) -> int:
    """Whitespace words, not counting the end punctuation token we appended."""
    return len(utterance.split()) - 1


def transcript_files(folder: Path) -> list[Path]:
    """The corpus CSVs under ``folder/original_transcripts`` (or ``folder`` itself)."""
    folder = Path(folder)
    candidates = folder / TRANSCRIPT_FOLDER if (folder / TRANSCRIPT_FOLDER).is_dir() else folder
    if not candidates.is_dir():
        raise CorpusError(f"corpus folder {folder} does not exist")
    files = sorted(candidates.glob("*.csv"))
    if not files:
        raise CorpusError(
            f"corpus folder {candidates} holds no transcripts (*.csv); run: python -m ssa_book data fetch aochildes"
        )
    return files


def clean_gloss(gloss: str, utterance_type: str) -> str | None:
    """One CHILDES gloss as a training sentence, or ``None`` when the rules drop it."""
    words = gloss.split()
    if any(word.lower() in UNTRANSCRIBABLE for word in words):
        return None
    for joiner in COMPOUND_JOINERS:
        words = " ".join(words).replace(joiner, " ").split()
    if not words:
        return None
    if utterance_type in QUESTION_TYPES:
        end = "?"
    elif utterance_type in EXCLAMATION_TYPES:
        end = "!"
    else:
        end = "."
    return " ".join(words) + " " + end


def _age(value: str, file: Path, line: int) -> float:
    if value in ("", "NA"):
        return math.nan
    try:
        return float(value)
    except ValueError:
        raise CorpusError(f"{file}, line {line}: target_child_age {value!r} is not a number of days") from None


def _read_rows(file: Path):
    with open(file, newline="", encoding="utf-8", errors="replace") as stream:
        reader = csv.DictReader(stream)
        missing = [column for column in REQUIRED_COLUMNS if column not in (reader.fieldnames or ())]
        if missing:
            raise CorpusError(f"{file}, line 1: the header lacks the column(s) {', '.join(missing)}")
        for line, row in enumerate(reader, start=2):
            yield line, row


def load_corpus(folder: str | Path | None = None) -> Corpus:
    """Read, filter, clean and age-order every transcript (default: ``ssa_book.data.path("aochildes")``)."""
    if folder is None:
        folder = data.path("aochildes")
    dropped: Counter = Counter()
    kept = []  # (age sort key, transcript, order, utterance, age, corpus)
    for file in transcript_files(Path(folder)):
        for line, row in _read_rows(file):
            if row["speaker_role"] in EXCLUDED_SPEAKER_ROLES:
                dropped["speaker"] += 1
                continue
            if row["collection_name"] != COLLECTION:
                dropped["collection"] += 1
                continue
            age = _age(row["target_child_age"], file, line)
            if age > MAX_AGE_DAYS:
                dropped["age"] += 1
                continue
            gloss = "" if row["gloss"] == "NA" else row["gloss"]
            if any(word.lower() in UNTRANSCRIBABLE for word in gloss.split()):
                dropped["untranscribable"] += 1
                continue
            utterance = clean_gloss(gloss, row["type"])
            if utterance is None:
                dropped["empty"] += 1
                continue
            try:
                transcript, order = int(row["transcript_id"]), int(row["utterance_order"])
            except ValueError:
                raise CorpusError(f"{file}, line {line}: transcript_id / utterance_order must be integers") from None
            sort_age = math.inf if math.isnan(age) else age
            kept.append((sort_age, transcript, order, utterance, age, file.stem))
    if not kept:
        raise CorpusError(f"no child-directed utterance is left in {folder} after filtering")
    kept.sort(key=lambda item: item[:3])
    return Corpus(
        utterances=tuple(item[3] for item in kept),
        ages_days=tuple(item[4] for item in kept),
        corpus_names=tuple(item[5] for item in kept),
        dropped=dict(dropped),
    )


def split_held_out(utterances: tuple[str, ...] | list[str], every: int) -> tuple[list[str], list[str]]:
    """Every ``every``-th utterance goes to the held-out set (spread over all ages)."""
    if every < 2:
        raise ValueError(f"every must be an int >= 2, got {every!r}")
    train = [utterance for index, utterance in enumerate(utterances) if index % every != every - 1]
    held_out = [utterance for index, utterance in enumerate(utterances) if index % every == every - 1]
    return train, held_out
