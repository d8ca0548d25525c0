import functools
import gzip
import hashlib
import http.server
import threading

import pytest

from ssa_book import data
from ssa_book.cli import data as cli_data

GOOD = b"grammatical line\nungrammatical line\r\n"


def _entry(content: bytes, url: str = "https://example.invalid/unused", **flags) -> dict:
    return {"sha256": hashlib.sha256(content).hexdigest(), "size": len(content), "url": url, **flags}


@pytest.fixture
def small_manifest(monkeypatch, tmp_path):
    """Swap the real 85 MB manifest for one tiny dataset named 'zorro'; point the data dir at tmp."""
    manifest = {"zorro": {"files": {"sentences/a.txt": _entry(GOOD)}}}
    monkeypatch.setattr(data, "load_manifest", lambda: manifest)
    monkeypatch.setenv("SSA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv(data.MIRROR_ENV, raising=False)
    data._verified_folder.cache_clear()
    yield manifest
    data._verified_folder.cache_clear()


def _mirror(tmp_path, content: bytes = GOOD):
    mirror = tmp_path / "mirror"
    (mirror / "zorro" / "sentences").mkdir(parents=True)
    (mirror / "zorro" / "sentences" / "a.txt").write_bytes(content)
    return mirror


def test_missing_dataset_error_prints_the_fetch_command(small_manifest):
    with pytest.raises(data.DatasetMissingError) as raised:
        data.path("zorro")
    assert "python -m ssa_book data fetch zorro" in str(raised.value)
    assert "make data" in str(raised.value)


def test_unknown_dataset_name_lists_the_names():
    with pytest.raises(ValueError, match="dataset name must be one of zorro, blimp, aochildes, wikitext-2, webtext"):
        data.path("wikitext-103")


def test_fetch_from_mirror_then_path_verifies(small_manifest, tmp_path):
    data.fetch(["zorro"], mirror=_mirror(tmp_path))
    folder = data.path("zorro")
    assert folder == tmp_path / "data" / "zorro"
    # Bytes are copied exactly: CRLF line endings survive.
    assert (folder / "sentences" / "a.txt").read_bytes() == GOOD


def test_fetch_reads_the_mirror_from_the_environment_and_skips_good_files(small_manifest, tmp_path, monkeypatch):
    monkeypatch.setenv(data.MIRROR_ENV, str(_mirror(tmp_path)))
    data.fetch(["zorro"])
    target = tmp_path / "data" / "zorro" / "sentences" / "a.txt"
    before = target.stat().st_mtime_ns
    data.fetch(["zorro"])
    assert target.stat().st_mtime_ns == before


def test_corrupt_file_is_reported_and_refetched(small_manifest, tmp_path):
    mirror = _mirror(tmp_path)
    data.fetch(["zorro"], mirror=mirror)
    target = tmp_path / "data" / "zorro" / "sentences" / "a.txt"
    target.write_bytes(GOOD.replace(b"\r\n", b"\n"))  # what line-ending normalisation would do
    assert data.problems("zorro") == [f"checksum mismatch {target}"]
    data.fetch(["zorro"], mirror=mirror)
    assert data.problems("zorro") == []


def test_bad_source_is_refused_and_leaves_no_file(small_manifest, tmp_path):
    with pytest.raises(data.DatasetError, match="does not match its recorded SHA-256"):
        data.fetch(["zorro"], mirror=_mirror(tmp_path, b"tampered"))
    assert not any(path.is_file() for path in (tmp_path / "data").rglob("*"))


def test_download_with_gunzip_and_cut_to_size(small_manifest, tmp_path):
    compressed = tmp_path / "upstream.txt.gz"
    compressed.write_bytes(gzip.compress(GOOD))
    truncated_upstream = tmp_path / "upstream.jsonl"
    truncated_upstream.write_bytes(GOOD + b'{"broken": ')
    small_manifest["zorro"]["files"] = {
        "sentences/a.txt": _entry(GOOD, compressed.as_uri(), gunzip=True),
        "sentences/b.jsonl": _entry(GOOD, truncated_upstream.as_uri(), cut_to_size=True),
    }
    data.fetch(["zorro"])
    assert data.problems("zorro") == []


def test_download_over_http(small_manifest, tmp_path):
    served = tmp_path / "served"
    served.mkdir()
    (served / "a.txt").write_bytes(GOOD)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/a.txt"
        small_manifest["zorro"]["files"]["sentences/a.txt"]["url"] = url
        data.fetch(["zorro"])
    finally:
        server.shutdown()
        server.server_close()
    assert data.problems("zorro") == []


def test_cli_verify_and_list(small_manifest, tmp_path, capsys):
    assert cli_data.main(["verify", "zorro"]) == 1
    assert "python -m ssa_book data fetch zorro" in capsys.readouterr().out
    assert cli_data.main(["fetch", "zorro", "--mirror", str(_mirror(tmp_path))]) == 0
    assert cli_data.main(["verify", "zorro"]) == 0


def test_cli_rejects_unknown_names():
    with pytest.raises(SystemExit):
        cli_data.main(["fetch", "imagenet"])


def test_real_manifest_covers_every_dataset_with_pinned_public_sources():
    data.load_manifest.cache_clear()
    manifest = data.load_manifest()
    assert set(manifest) == set(data.DATASET_NAMES)
    files = [entry for dataset in manifest.values() for entry in dataset["files"].values()]
    assert len(files) == 123
    assert sum(entry["size"] for entry in files) == 85_604_068
    for entry in files:
        assert len(entry["sha256"]) == 64
        # raw.githubusercontent.com/<owner>/<repo>/<40-hex commit>/<path>
        parts = entry["url"].split("/")
        assert entry["url"].startswith("https://raw.githubusercontent.com/") and len(parts[5]) == 40
    assert sum(bool(entry.get("gunzip")) for entry in files) == 2
    assert sum(bool(entry.get("cut_to_size")) for entry in files) == 1
