"""The documentation site's build hooks (mkdocs.yml: ``hooks:`` and mkdocstrings' griffe ``extensions:``).

- ``on_files`` (an mkdocs hook) adds the pages generated from the code when the site is built: the scramble
  types, the command-line reference and the API reference
  (``scrambled_bench.evaluate_cli.reference.generated_pages``). A file of that name under ``docs/`` is an
  error, so a stale copy can never hide the generated page.
- ``SiteDocstrings`` (a griffe extension) shows every docstring as the site should: its ``>>>`` examples as
  code blocks and Sphinx roles as code (``reference.docstring_markdown``).

All the logic lives in the package (``evaluate_cli/reference.py``, tested there); this file only plugs it in.
"""

from __future__ import annotations

from typing import Any

import griffe
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

from scrambled_bench.evaluate_cli.reference import docstring_markdown, generated_pages


def on_files(files: Files, config: Any) -> Files:
    """Add every generated page to the site's files; refuse a file under ``docs/`` that one would replace."""
    pages = generated_pages()
    stale = [path for path in pages if files.get_file_from_path(path) is not None]
    if stale:
        raise PluginError(
            f"{', '.join(f'docs/{path}' for path in stale)}: generated when the site is built; remove the file"
        )
    for path, text in pages.items():
        files.append(File.generated(config, path, content=text))
    return files


class SiteDocstrings(griffe.Extension):
    """Every docstring as markdown the site renders: doctest examples fenced, Sphinx roles as code."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = docstring_markdown(obj.docstring.value)
