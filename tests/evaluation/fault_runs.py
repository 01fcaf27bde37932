"""The fault tests' two runs of the same requests: one through the fault proxy, one straight to the server."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Faulty = TypeVar("Faulty")
Clean = TypeVar("Clean")


def clean_beside_faulty(faulty: Callable[[], Faulty], clean: Callable[[], Clean]) -> tuple[Faulty, Clean]:
    """``(faulty(), clean())``, the clean run sent while the faulty one waits out its stalls, which it would
    otherwise wait out alone. The tests' server answers each prompt from an empty cache
    (tests/servers/llama_server.py), so the order in which the two runs' requests reach it changes no answer."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        faulty_run = pool.submit(faulty)
        clean_result = clean()
        return faulty_run.result(), clean_result
