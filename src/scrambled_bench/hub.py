"""What every part of the package that talks to the Hugging Face Hub shares: the repository-id check and
one table that turns a Hub failure into a one-line message (never a traceback, never a token).
"""

from __future__ import annotations

import re

from scrambled_bench.errors import ScrambledBenchError, first_line

REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
"""A Hub repository id: ``owner/name``; a leading ``.`` or ``/`` is a local path, not an id."""


def is_repo_id(value: str) -> bool:
    """Whether ``value`` is shaped like a Hub repository id.

    >>> is_repo_id("my-org/scrambled_bench"), is_repo_id("./scrambled_bench"), is_repo_id("a/b/c")
    (True, False, False)
    """
    return bool(REPO_ID.match(value))


def check_repo_id(value: str, option: str = "repository") -> str:
    """``value`` when it is a Hub repository id, else a one-line error naming the ``option``.

    >>> check_repo_id("org/results")
    'org/results'
    >>> check_repo_id("results", "--push")
    Traceback (most recent call last):
    ...
    scrambled_bench.errors.ScrambledBenchError: --push: expected a Hub repository id ORG/NAME, got 'results'
    """
    if not isinstance(value, str) or not is_repo_id(value):
        raise ScrambledBenchError(f"{option}: expected a Hub repository id ORG/NAME, got {value!r}")
    return value


def _status(exc: BaseException) -> int | None:
    return getattr(getattr(exc, "response", None), "status_code", None)


def hub_error(action: str, repo_id: str, exc: BaseException) -> ScrambledBenchError:
    """The one-line error for a failed Hub call ``action`` on ``repo_id`` (e.g. "upload to").

    >>> str(hub_error("upload to", "org/x", OSError("Network is unreachable")))
    'cannot upload to org/x: Network is unreachable'
    """
    from huggingface_hub import errors  # deferred: huggingface_hub is heavy; only a Hub call needs it

    status = _status(exc)
    # one row per failure a user can act on; anything else keeps the first line of the library's message
    if isinstance(exc, errors.OfflineModeIsEnabled):
        reason = "HF_HUB_OFFLINE is set"
    elif status in (401, 403) or isinstance(exc, errors.LocalTokenNotFoundError):
        reason = f"not authorised (HTTP {status}); set HF_TOKEN or run `hf auth login` with a token that can write to it"
    elif isinstance(exc, errors.RepositoryNotFoundError) or status == 404:
        reason = "repository not found (or not visible with this token)"
    elif isinstance(exc, errors.RevisionNotFoundError):
        reason = "revision not found"
    elif status == 429:
        reason = "rate limited by the Hub (HTTP 429); try again later"
    else:
        reason = first_line(exc)
    return ScrambledBenchError(f"cannot {action} {repo_id}: {reason}")


def require_token() -> None:
    """A one-line error before anything is created when no Hugging Face token is configured."""
    from huggingface_hub import get_token  # deferred: huggingface_hub is heavy; only a Hub call needs it

    if get_token() is None:
        raise ScrambledBenchError("no Hugging Face token: set HF_TOKEN or run `hf auth login`")
