"""Local servers the network benchmarks send to, each in its own process: the fixed-delay server
(tests/servers/fixed_delay_server.py: OpenAI-shaped and TGI-shaped answers after a fixed delay) and
llama-cpp-python's own OpenAI-compatible server on the SmolLM2 GGUF.

The server scripts live in the test tree; a benchmark that cannot find one stops at import with the path
it looked for, instead of timing out later while "waiting for the server".
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

from support import repo_file

FIXED_DELAY_SERVER = repo_file("tests/servers/fixed_delay_server.py")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(
    command: list[str], root: str, ready_path: str, *, timeout: float, what: str
) -> subprocess.Popen[bytes]:
    """Start a local server process; return it once ``GET root + ready_path`` answers."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the {what} exited with code {process.returncode}: {' '.join(command)}")
        try:
            with urllib.request.urlopen(root + ready_path, timeout=1):
                return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"the {what} did not start within {timeout:g} s")


def start_fixed_delay_server(delay: float) -> tuple[subprocess.Popen[bytes], str]:
    """Start the fixed-delay server; return it and its root URL (``/v1`` for OpenAI, root for TGI)."""
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    command = [sys.executable, str(FIXED_DELAY_SERVER), "--port", str(port), "--delay", str(delay)]
    return start_server(command, root, "/health", timeout=20, what="fixed-delay server"), root


def start_llama_server() -> tuple[subprocess.Popen[bytes], str]:
    """llama-cpp-python's OpenAI-compatible server on SmolLM2 (model ``smollm2``); return it and its root."""
    from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf

    port = free_port()
    root = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(find_smollm2_gguf()), "--model_alias", "smollm2",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
    ]  # fmt: skip
    return start_server(command, root, "/v1/models", timeout=60, what="llama.cpp server"), root


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
