"""The documentation site's generated pages: the scramble-type reference, the command-line reference and the
API reference, made from the code when the site is built (``mkdocs build``; the hook in
``scripts/mkdocs_hooks.py`` adds them), so none of them can drift from it.

- :func:`cli_reference_markdown`: every command, subcommand, argument and option of the Typer app, with its
  help and default, walked from the click objects Typer makes (``typer.main.get_command``) and rendered from
  the same help records ``--help`` prints; hidden options stay hidden.
- :data:`API_PAGES`: the API reference, one page per area, each a list of modules that mkdocstrings renders
  from their docstrings (``::: module``). **This list is the one place that names the documented modules.**
- :func:`generated_pages`: every generated page, by its path in the site.
- :func:`docstring_markdown`: a docstring as the site shows it (its ``>>>`` examples as code blocks, Sphinx
  roles as code), applied to every docstring by the griffe extension in ``scripts/mkdocs_hooks.py``.

The type reference itself is :func:`scrambled_bench.builder.type_reference.type_reference_markdown`, which
``scrambled-bench list types`` shares.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import typer.main

from scrambled_bench.builder.type_reference import type_reference_markdown
from scrambled_bench.evaluate_cli.main import app
from scrambled_bench.metrics import METRIC_NAMES, metric_path

TYPES_PAGE = "reference/scramble-types.md"
CLI_PAGE = "reference/cli.md"
API_FOLDER = "reference/api"
PROGRAM = "scrambled-bench"


# --------------------------------------------------------------------------------------------------
# The API reference
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApiPage:
    """One page of the API reference: ``reference/api/<slug>.md``, its title, a sentence on what it holds
    and the modules rendered on it (mkdocstrings identifiers, in order)."""

    slug: str
    title: str
    summary: str
    modules: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"{API_FOLDER}/{self.slug}.md"


def metric_modules() -> tuple[str, ...]:
    """The ``evaluate`` metric scripts as mkdocstrings identifiers. A metric folder (``metrics/<name>/``) is
    not an importable package (``evaluate.load`` reads it as files), so mkdocs.yml adds ``metrics`` to the
    handler's search paths, where ``<name>.<name>`` is the folder's script.

    >>> metric_modules()[0]
    'recovery_rate.recovery_rate'
    """
    return tuple(f"{name}.{name}" for name in METRIC_NAMES)


API_PAGES: tuple[ApiPage, ...] = (
    ApiPage(
        "scramble",
        "Scramble API",
        "The scramble functions every command shares (`build`, `scramble`, the harness variants and the "
        "datatrove step use them alike); scrambling any dataset; the paper's fine-tuning recipes; the "
        "datatrove step.",
        (
            "scrambled_bench.builder.scrambler",
            "scrambled_bench.builder.scramble",
            "scrambled_bench.builder.recipes",
            "scrambled_bench.builder.datatrove_step",
        ),
    ),
    ApiPage(
        "builder",
        "Builder",
        "The versioned build of the Scrambled Bench datasets (`scrambled-bench build`) and its manifest.",
        ("scrambled_bench.builder.build", "scrambled_bench.builder.manifest"),
    ),
    ApiPage(
        "metrics",
        "Metrics",
        "The `evaluate` metric modules (each a folder under `metrics/`, loaded by `evaluate.load`), the "
        "package's loader for them, and the statistics every comparison uses.",
        ("scrambled_bench.metrics", *metric_modules(), "scrambled_bench.metrics.statistics"),
    ),
    ApiPage(
        "readers",
        "Answer readers",
        "How a model's free text becomes a choice letter or a recovered sentence: the `paper` and `careful` "
        "readers.",
        ("scrambled_bench.metrics.readers",),
    ),
    ApiPage(
        "evaluation",
        "Evaluation engine",
        "`scrambled-bench run` as a library: run settings, the resumable engine and its results.",
        ("scrambled_bench.evaluation",),
    ),
    ApiPage(
        "harnesses",
        "Harness interface",
        "The one interface every evaluation harness implements (lm-eval, lighteval, Inspect, or one of "
        "your own), its registry, and the base class of harnesses whose tasks read a dataset.",
        (
            "scrambled_bench.integrations.base",
            "scrambled_bench.integrations.registry",
            "scrambled_bench.integrations.datasets",
        ),
    ),
    ApiPage(
        "report",
        "Report",
        "`scrambled-bench report` as a library: tables, figures, HTML, and the scrambled variants of another "
        "benchmark (`report --from`).",
        ("scrambled_bench.report", "scrambled_bench.report.variants"),
    ),
)
"""The API reference, page by page: the one list of the modules the site documents (renaming a module is an
edit here)."""


def metric_card(name: str) -> str:
    """The metric card of ``metrics/<name>/`` (the README the Hub shows) for a page of the site: without its
    YAML header, its headings one level down.

    >>> metric_card("recovery_rate").splitlines()[0]
    '## Metric Card for Recovery Rate'
    """
    text = (metric_path(name) / "README.md").read_text(encoding="utf-8")
    if text.startswith("---"):
        text = text.split("\n---", 1)[1].split("\n", 1)[1]
    out, fenced = [], False
    for line in text.strip("\n").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append("#" + line if line.startswith("#") and not fenced else line)
    return "\n".join(out)


def api_page_markdown(page: ApiPage) -> str:
    """A page of the API reference: its title, summary, and one mkdocstrings block per module; a metric
    script comes after its metric card (:func:`metric_card`).

    >>> print(api_page_markdown(ApiPage("x", "X", "What X holds.", ("scrambled_bench.errors",))))
    # X
    <BLANKLINE>
    What X holds.
    <BLANKLINE>
    ::: scrambled_bench.errors
    <BLANKLINE>
    """
    lines = [f"# {page.title}", "", page.summary, ""]
    metrics = metric_modules()
    for module in page.modules:
        if module in metrics:
            name = module.split(".")[0]
            lines += [
                metric_card(name),
                "",
                f"::: {module}",
                "    options:",
                f'      heading: "The script: metrics/{name}/{name}.py"',
                "      show_root_heading: true",
                "      heading_level: 3",
                "",
            ]
        else:
            lines += [f"::: {module}", ""]
    return "\n".join(lines)


def api_index_markdown() -> str:
    """The API reference's first page: what each page holds."""
    lines = [
        "# API reference",
        "",
        (
            "Generated from the docstrings of the public modules when the site is built; their `>>>` examples "
            "run as doctests in the test suite."
        ),
        "",
    ]
    lines += [f"- [{page.title}]({page.slug}.md): {page.summary}" for page in API_PAGES]
    return "\n".join([*lines, ""])


# --------------------------------------------------------------------------------------------------
# The command-line reference
# --------------------------------------------------------------------------------------------------

_ESCAPED = re.compile(r"([\\*_\[\]#])")


def _markdown_text(text: str) -> str:
    """Plain text for markdown prose: code spans kept, markup characters outside them escaped.

    >>> _markdown_text("a *b* <c> `d *e*` [x]")
    'a \\\\*b\\\\* &lt;c&gt; `d *e*` \\\\[x\\\\]'
    """
    pieces = re.split(r"(`[^`]*`)", text)
    out = []
    for index, piece in enumerate(pieces):
        if index % 2:
            out.append(piece)
        else:
            piece = _ESCAPED.sub(r"\\\1", piece)
            out.append(piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    return "".join(out)


def _code(text: str) -> str:
    """``text`` as one inline code span (backticks inside it taken care of)."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _help_paragraphs(text: str) -> list[str]:
    """A command's help as markdown blocks: indented paragraphs (examples, command lines) as code blocks,
    the others as prose.

    >>> _help_paragraphs("Build it.\\n\\nExamples:\\n\\n  scrambled-bench build --types kfl\\n\\n  scrambled-bench build")
    ['Build it.', 'Examples:', '```text\\nscrambled-bench build --types kfl\\n\\nscrambled-bench build\\n```']
    """
    blocks = []
    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.splitlines()
        if not lines:
            continue
        if all(line.startswith((" ", "\t")) for line in lines if line.strip()):
            indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
            code = "\n".join(line[indent:] for line in lines)
            if blocks and blocks[-1].startswith("```text\n"):  # consecutive examples: one block
                blocks[-1] = blocks[-1][: -len("\n```")] + f"\n\n{code}\n```"
            else:
                blocks.append(f"```text\n{code}\n```")
        else:
            blocks.append(_markdown_text(" ".join(line.strip() for line in lines)))
    return blocks


@dataclass(frozen=True)
class CommandDoc:
    """One command as the reference shows it: its full path (``scrambled-bench list types``), usage line,
    help, epilog, and its parameters' help records (the two columns ``--help`` prints), arguments first."""

    path: str
    usage: str
    help: str
    epilog: str
    arguments: tuple[tuple[str, str], ...]
    options: tuple[tuple[str, str], ...]
    subcommands: tuple[str, ...] = ()


def _walk(command: Any, ctx: Any) -> Iterator[CommandDoc]:
    """The command of ``ctx`` and, for a group, every command under it (not hidden), in ``--help``'s order."""
    arguments, options = [], []
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None:  # a hidden option
            continue
        if param.param_type_name == "argument":
            arguments.append(record)
        else:
            options.append(record)
    names = []
    if hasattr(command, "list_commands"):
        names = [name for name in command.list_commands(ctx) if not command.get_command(ctx, name).hidden]
    yield CommandDoc(
        path=ctx.command_path,
        usage=command.get_usage(ctx).strip(),
        help=command.help or "",
        epilog=command.epilog or "",
        arguments=tuple(arguments),
        options=tuple(options),
        subcommands=tuple(names),
    )
    for name in names:
        sub = command.get_command(ctx, name)
        with sub.make_context(name, [], parent=ctx, resilient_parsing=True) as sub_ctx:
            yield from _walk(sub, sub_ctx)


def command_docs() -> list[CommandDoc]:
    """Every command of ``scrambled-bench``, the root first, then each command (and each subcommand of a
    group) in the order ``--help`` lists them.

    >>> docs = command_docs()
    >>> docs[0].path, any(doc.path == "scrambled-bench list types" for doc in docs)
    ('scrambled-bench', True)
    >>> report = next(doc for doc in docs if doc.path == "scrambled-bench report")
    >>> any(opts.startswith("-f, --format") for opts, _ in report.options)
    True
    >>> any("--from-lm-eval" in opts for opts, _ in report.options)  # hidden stays hidden
    False
    """
    root = typer.main.get_command(app)
    with root.make_context(PROGRAM, [], resilient_parsing=True) as ctx:
        return list(_walk(root, ctx))


def _anchor(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


def _parameters(title: str, records: tuple[tuple[str, str], ...]) -> list[str]:
    if not records:
        return []
    lines = [f"**{title}**", ""]
    for syntax, text in records:
        lines.append(f"- {_code(syntax)}" + (f": {_markdown_text(' '.join(text.split()))}" if text else ""))
    return [*lines, ""]


def cli_reference_markdown() -> str:
    """The command-line reference: per command its usage, help, arguments and options (each with its help
    and default, as ``--help`` prints them) and, where it has one, its epilog."""
    docs = command_docs()
    lines = [
        "# Command-line reference",
        "",
        (
            f"Every command of `{PROGRAM}`, generated from the command line itself when this site is built: the "
            "usage, help, arguments and options (with their defaults) are what `--help` prints. Options hidden "
            "from `--help` (deprecated spellings) are left out here too. A problem you can fix is one line "
            "`error: ...` and exit status 2."
        ),
        "",
    ]
    for doc in docs[1:]:
        depth = doc.path.count(" ")
        lines.append(f"{'    ' * (depth - 1)}- [`{doc.path}`](#{_anchor(doc.path)})")
    lines.append("")
    for doc in docs:
        level = "##" if doc.path.count(" ") <= 1 else "###"  # a subcommand under its group's section
        lines += [f"{level} `{doc.path}` {{#{_anchor(doc.path)}}}", ""]
        lines += ["```text", doc.usage, "```", ""]
        for block in _help_paragraphs(doc.help):
            lines += [block, ""]
        lines += _parameters("Arguments", doc.arguments)
        lines += _parameters("Options", doc.options)
        if doc.subcommands:
            lines += ["**Commands**", ""]
            lines += [
                f"- [`{doc.path} {name}`](#{_anchor(f'{doc.path} {name}')})" for name in doc.subcommands
            ]
            lines.append("")
        if doc.epilog.strip():
            lines += ["```text", doc.epilog.strip("\n"), "```", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# Docstrings as the site shows them
# --------------------------------------------------------------------------------------------------

_ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|obj|exc|const|py:\w+):`(~?)\.*([^`]+)`")
_PROMPT = re.compile(r"^(\s*)>>> ")


def docstring_markdown(text: str) -> str:
    """A docstring (Sphinx-flavoured prose with doctest examples) as markdown for the site: each run of
    ``>>>`` lines with their expected output becomes a ``pycon`` code block, a role such as
    ``:class:`~.base.Harness``` becomes the code span `Harness`, and a paragraph ending in ``::`` (a literal
    block follows) ends in ``:``.

    >>> text = docstring_markdown("Use :func:`~.x.load`::\\n\\n    load()\\n\\n>>> 1 + 1\\n2\\n\\nDone.")
    >>> text.splitlines()[:4]
    ['Use `load`:', '', '    load()', '']
    >>> text.splitlines()[4:]
    ['```pycon', '>>> 1 + 1', '2', '```', '', 'Done.']
    """

    def role(match: re.Match[str]) -> str:
        target = match.group(2)
        return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"

    lines = text.splitlines()
    out: list[str] = []
    index = 0
    in_fence = False
    while index < len(lines):
        line = lines[index]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        prompt = None if in_fence else _PROMPT.match(line)
        if prompt is None:
            line = _ROLE.sub(role, line)
            if line.rstrip().endswith("::") and line.strip() != "::":
                line = line.rstrip()[:-1]
            out.append(line)
            index += 1
            continue
        indent = prompt.group(1)
        out.append(f"{indent}```pycon")
        while index < len(lines) and lines[index].strip():
            out.append(lines[index])
            index += 1
        out.append(f"{indent}```")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------------
# Every generated page
# --------------------------------------------------------------------------------------------------


def generated_pages() -> dict[str, str]:
    """Every generated page of the site, by its path under ``docs/``: the type reference, the command-line
    reference and the API reference (its index and one page per :data:`API_PAGES` entry).

    >>> sorted(generated_pages())[:3]
    ['reference/api/builder.md', 'reference/api/evaluation.md', 'reference/api/harnesses.md']
    """
    pages = {
        TYPES_PAGE: type_reference_markdown(),
        CLI_PAGE: cli_reference_markdown(),
        f"{API_FOLDER}/index.md": api_index_markdown(),
    }
    pages.update({page.path: api_page_markdown(page) for page in API_PAGES})
    return pages


__all__ = [
    "API_PAGES",
    "CLI_PAGE",
    "TYPES_PAGE",
    "ApiPage",
    "CommandDoc",
    "api_page_markdown",
    "cli_reference_markdown",
    "command_docs",
    "docstring_markdown",
    "generated_pages",
]
