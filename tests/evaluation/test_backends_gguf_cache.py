"""The de-quantised GGUF cache's writing rules, with stand-ins for the model and tokenizer (what
``save_pretrained`` writes is all an entry is made of); the real GGUF's round trip is in
test_backends_transformers.py."""

from __future__ import annotations

from pathlib import Path

from scrambled_bench.evaluation.backends import gguf_cache

DIGEST = "ab" * 32


class Saved:
    """A model or tokenizer whose ``save_pretrained`` writes one file with ``content``."""

    dtype = "torch.float32"

    def __init__(self, name: str, content: bytes) -> None:
        self.name, self.content = name, content

    def save_pretrained(self, folder: Path, **_: object) -> None:
        (Path(folder) / self.name).write_bytes(self.content)


def store(root: Path, weights: bytes, *, replace: bool = False) -> gguf_cache.CachedGGUF:
    return gguf_cache.store_entry(
        DIGEST,
        "m.gguf",
        Saved("model.safetensors", weights),
        Saved("tokenizer.json", b"{}"),
        root,
        replace=replace,
    )


def test_a_usable_entry_is_kept_unless_it_did_not_load_and_is_replaced(tmp_path: Path) -> None:
    first = store(tmp_path, b"first")
    assert gguf_cache.find_entry(DIGEST, tmp_path) == (first, None)
    # another process finished first: its usable entry is kept, ours dropped
    store(tmp_path, b"second")
    assert (first.folder / "model.safetensors").read_bytes() == b"first"
    # an entry that passed every check but did not load (replace=True) is replaced by the new one
    again = store(tmp_path, b"third", replace=True)
    assert again == first and (again.folder / "model.safetensors").read_bytes() == b"third"
    assert gguf_cache.find_entry(DIGEST, tmp_path) == (again, None)
    # nothing left beside the entry: no staging folder, no folder renamed aside for deletion
    assert [p.name for p in tmp_path.iterdir()] == [DIGEST]
