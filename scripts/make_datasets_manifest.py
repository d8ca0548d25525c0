"""Regenerate ssa_book/datasets.json from a data mirror's SHA256SUMS and the sources in its SOURCE.md files.

    python scripts/make_datasets_manifest.py ../shared/data

Each file's public source is the raw GitHub URL of the exact commit its SOURCE.md names. The table
below transcribes those SOURCE.md files (repository, commit, path in the repository); this script
adds the sums and sizes, which are measured, not transcribed.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

MANIFEST = Path(__file__).resolve().parent.parent / "ssa_book" / "datasets.json"


@dataclass(frozen=True)
class Source:
    local: str  # a file path, or a folder prefix ending in "/", relative to the mirror
    repo: str
    commit: str
    upstream: str  # path in the repository; for a folder prefix, the matching upstream folder
    gunzip: bool = False
    # The upstream blob is longer than the file; the file is its first `size` bytes (a record
    # cut off by the uploader was dropped).
    cut_to_size: bool = False


SOURCES = [
    Source("zorro/sentences/", "phueb/Zorro", "687ba433e91a3815e8204a8fc0cf0577303b1660", "sentences/babyberta/"),
    Source("blimp/", "alexwarstadt/blimp", "3e56b06fcabca9b30822fc66435fca6b1aa40bb1", "data/"),
    Source(
        "aochildes/original_transcripts/",
        "UIUCLearningLanguageLab/AOCHILDES",
        "e25348138282c35f4270800e592676b8713e67a1",
        "aochildes/original_transcripts/",
    ),
    Source("wikitext-2/", "DRAGNLabs/LLMHumanModeling", "a76c47739e890a857b138b0adc5ca47a10c4c18f", "data/"),
    Source(
        "webtext/c4/c4_en_train00000_head1000.jsonl",
        "Diffusion-bachelor/diffusion-data-constraint-rare-events",
        "3305ae85ae51f4882f291ff894d49946af655a11",
        "data/c4_sample.jsonl",
    ),
    Source(
        "webtext/c4/c4_en_olmo_fixture_sample1000.jsonl",
        "allenai/OLMo",
        "06c867c36986328ac31e3877faca286dba0925c3",
        "test_fixtures/c4-sample.00000-of-00001.json.gz",
        gunzip=True,
    ),
    Source(
        "webtext/c4/c4_prefix_completion_pfdecoding.jsonl",
        "XuandongZhao/pf-decoding",
        "dbcef09aa9dcba08ef3f28166c5e54f279a2672d",
        "data/c4.jsonl",
    ),
    Source("webtext/ccnet/", "allenai/dolma", "669f534823b08d266a8fff01f8a1c916a5a56576", "tests/data/multiple_files/"),
    Source(
        "webtext/cc_raw/CC-MAIN-20190717121559-20190717143559-00140.jsonl",
        "allenai/dolma",
        "937ccc06f6fa4cefba496b2f48cc77418b941345",
        "tests/data/formats/gz/CC-MAIN-20190717121559-20190717143559-00140.jsonl.gz",
        gunzip=True,
    ),
    Source(
        "webtext/gpt2_webtext/webtext.test.jsonl",
        "Isinlor/AdversarialDecoder",
        "2aaaf1fc62f5e3f1b4f43d09a04f69ac521544cc",
        "data/webtext.test.jsonl",
    ),
    Source(
        "webtext/gpt2_webtext/webtext.valid.jsonl",
        "Isinlor/AdversarialDecoder",
        "2aaaf1fc62f5e3f1b4f43d09a04f69ac521544cc",
        "data/webtext.valid.jsonl",
    ),
    Source(
        "webtext/gpt2_webtext/webtext.train.first1408.jsonl",
        "littlemoon0210/LLM4EDA_pj1",
        "3fb6608af4351abd4fab005eebf069459df60aaf",
        "data/webtext.train.jsonl",
        cut_to_size=True,
    ),
]


def source_for(local_path: str) -> Source:
    for source in SOURCES:
        if local_path == source.local or (source.local.endswith("/") and local_path.startswith(source.local)):
            return source
    raise KeyError(f"no source recorded for {local_path}; add it to SOURCES")


def manifest_entry(mirror: Path, local_path: str, sha256: str) -> tuple[str, str, dict]:
    dataset, relative = local_path.split("/", 1)
    source = source_for(local_path)
    upstream = source.upstream + local_path[len(source.local) :] if source.local.endswith("/") else source.upstream
    entry = {
        "sha256": sha256,
        "size": (mirror / local_path).stat().st_size,
        "url": f"https://raw.githubusercontent.com/{source.repo}/{source.commit}/{upstream}",
    }
    if source.gunzip:
        entry["gunzip"] = True
    if source.cut_to_size:
        entry["cut_to_size"] = True
    return dataset, relative, entry


def main(mirror: Path) -> None:
    datasets: dict[str, dict] = {}
    for line in (mirror / "SHA256SUMS").read_text().splitlines():
        sha256, local_path = line.split(maxsplit=1)
        dataset, relative, entry = manifest_entry(mirror, local_path, sha256)
        datasets.setdefault(dataset, {"files": {}})["files"][relative] = entry
    MANIFEST.write_text(json.dumps({"datasets": datasets}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {MANIFEST}: {sum(len(d['files']) for d in datasets.values())} files in {len(datasets)} datasets")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data"))
