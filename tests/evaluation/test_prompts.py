"""The prompts are the paper's, byte for byte: rebuilt from the parts of the authors' released inputs,
they give back exactly those inputs."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from scrambled_bench.evaluation import prompts
from scrambled_bench.metrics.readers import parse_choices

# One ScrRec few-shot input of the authors' release (ccqq77/unnatural-error-correction,
# output/scrambled_rec/scrambled_realtimeQA/few-shot/random_20%/gpt-4-0314, first line). The mirror in
# ../shared drops ScrRec inputs to save space, so this one is kept here.
AUTHORS_SCRREC_FEW_SHOT_INPUT = (
    "Scrambled Sentence: eTh camp continued to fnctinuo this ayw ilntu the rwa needd.\n"
    "Recovered Sentence: The camp continued to function this way until the war ended.\n\n"
    "Scrambled Sentence: It swa first developed ni the 1980s yb oAcrn Computers tdL ot erowp their pstodke "
    "nmecisah and subsequently supn off sa a separate paocnmy, now ARM Holdings.\n"
    "Recovered Sentence: It was first developed in the 1980s by Acorn Computers Ltd to power their desktop "
    "machines and subsequently spun off as a separate company, now ARM Holdings.\n\n"
    "Scrambled Sentence: According to the CIA kcbFotoa, the United States is one fo eethr iusecnort (het etrhos "
    "nebgi Liberia nda mBuar/Myanmar) that sha not adopted eth International System fo Utins (SI) rmtcei symset "
    "as iethr ffliicao system fo gswheit dna measures.\n"
    "Recovered Sentence: According to the CIA Factbook, the United States is one of three countries (the "
    "others being Liberia and Burma/Myanmar) that has not adopted the International System of Units (SI) "
    "metric system as their official system of weights and measures.\n\n"
    "Scrambled sentence: A reGebr baby ulfaorm was titbudiserd to stores despite a recall over possible "
    "contamination, according to the FDA. The company is encouraging parents to check any products they have "
    "ta home and cdisadr sehot that may eb affected.\nRecovered sentence:"
)


def _letters(word: str) -> str:
    return "".join(sorted(word))


def test_scrrec_few_shot_reproduces_the_authors_input() -> None:
    demo_part, target_part = AUTHORS_SCRREC_FEW_SHOT_INPUT.rsplit("\n\nScrambled sentence: ", 1)
    scrambled_exemplars = re.findall(r"Scrambled Sentence: (.*)\n", AUTHORS_SCRREC_FEW_SHOT_INPUT)
    target = target_part.removesuffix("\nRecovered sentence:")
    demonstration = prompts.scrrec_demonstration(scrambled_exemplars)
    assert prompts.scrrec_few_shot_prompt(target, demonstration) == AUTHORS_SCRREC_FEW_SHOT_INPUT


def test_scrrec_exemplars_are_scrambled_at_half_the_words_with_the_seed() -> None:
    for seed in (0, 1):
        scrambled = prompts.scrambled_scrrec_exemplars(seed)
        assert scrambled == prompts.scrambled_scrrec_exemplars(seed)
        for original, mixed in zip(prompts.SCRREC_EXEMPLARS, scrambled):
            original_words, mixed_words = original.split(" "), mixed.split(" ")
            assert [_letters(w) for w in original_words] == [_letters(w) for w in mixed_words]
            assert mixed != original
    assert prompts.scrambled_scrrec_exemplars(0) != prompts.scrambled_scrrec_exemplars(1)


def test_zero_shot_scrrec_is_the_instruction_then_the_target() -> None:
    prompt = prompts.scrrec_zero_shot_prompt("  A reGebr baby ulfaorm.  ")
    assert prompt == (
        "The following sentence contains words with scrambled letters. Please recover the original sentence "
        "from it.\nScrambled sentence: A reGebr baby ulfaorm.\nRecovered sentence:"
    )


def test_aqua_exemplar_rates_scramble_only_the_questions() -> None:
    assert prompts.scrambled_aqua_exemplar_questions(0, seed=3) == [e["question"] for e in prompts.AQUA_EXEMPLARS]
    full = prompts.scrambled_aqua_exemplar_questions(100, seed=3)
    assert all(q != e["question"] for q, e in zip(full, prompts.AQUA_EXEMPLARS))
    demo = prompts.aqua_demonstration(full)
    for exemplar in prompts.AQUA_EXEMPLARS:
        assert f"Answer: {exemplar['answer']}\n\n" in demo
    with pytest.raises(ValueError, match="exemplar rate"):
        prompts.scrambled_aqua_exemplar_questions(30, seed=0)


def _first_inputs(path: Path, count: int = 25) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line)["input"] for _, line in zip(range(count), handle)]


@pytest.mark.shared
@pytest.mark.parametrize("scramble", ["original", "random_50%", "substituted"])
def test_realtimeqa_prompts_equal_the_released_inputs(shared_data: Path, scramble: str) -> None:
    path = shared_data / f"paper_outputs/scrambled_qa/scrambled_realtimeQA/zero-shot/{scramble}/gpt-4-0314.jsonl.gz"
    for released in _first_inputs(path):
        question = re.search(r"^Question: (.*)$", released, re.M).group(1)
        evidence = re.search(r"^Evidence: (.*)$", released, re.M).group(1)
        assert prompts.realtimeqa_prompt(question, parse_choices(released), evidence) == released


@pytest.mark.shared
@pytest.mark.parametrize("split", ["test", "dev"])
def test_dream_prompts_equal_the_released_inputs(shared_data: Path, split: str) -> None:
    path = shared_data / f"paper_outputs/scrambled_qa/scrambled_DREAM_{split}/zero-shot/keepfirstlast/gpt-4-0314.jsonl.gz"
    for released in _first_inputs(path):
        dialogue = released.split("Dialogue:\n", 1)[1].rsplit("\nQuestion: ", 1)[0]
        question = re.findall(r"^Question: (.*)$", released, re.M)[-1]
        assert prompts.dream_prompt(dialogue, question, parse_choices(released)) == released


@pytest.mark.shared
def test_aqua_prompt_at_exemplar_rate_0_equals_the_released_input(shared_data: Path) -> None:
    path = shared_data / "paper_outputs/scrambled_qa/scrambled_AQuA/few-shot-cot/demo_random_0%/original/gpt-4-0314.jsonl.gz"
    demonstration = prompts.aqua_demonstration(prompts.scrambled_aqua_exemplar_questions(0, seed=0))
    for released in _first_inputs(path, 200):
        assert released.startswith(demonstration)
        target = released[len(demonstration):]
        question = target.removeprefix("Question: ").rsplit("\nChoices: ", 1)[0]  # questions can span lines
        assert prompts.aqua_prompt(question, parse_choices(target), demonstration) == released


@pytest.mark.shared
def test_aqua_prompt_with_scrambled_exemplars_matches_the_released_layout(shared_data: Path) -> None:
    """At 50% the authors' exemplar questions came from their own RNG: everything else is identical."""
    path = shared_data / "paper_outputs/scrambled_qa/scrambled_AQuA/few-shot-cot/demo_random_50%/random_20%/gpt-4-0314.jsonl.gz"
    released = _first_inputs(path, 1)[0]
    released_questions = re.findall(r"^Question: (.*)$", released, re.M)[:4]
    demonstration = prompts.aqua_demonstration(released_questions)
    target = released[len(demonstration):]
    question = target.removeprefix("Question: ").rsplit("\nChoices: ", 1)[0]
    assert prompts.aqua_prompt(question, parse_choices(target), demonstration) == released
    ours = prompts.scrambled_aqua_exemplar_questions(50, seed=0)
    for mine, theirs in zip(ours, released_questions):
        assert [_letters(w) for w in mine.split(" ")] == [_letters(w) for w in theirs.split(" ")]


@pytest.fixture(scope="module")
def original_build(source_mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unscrambled configs of all three sources, built from the mirror."""
    from scrambled_bench.builder.build import build_dataset

    return build_dataset(tmp_path_factory.mktemp("build") / "sb", types=["original"], source_dir=source_mirror)


@pytest.mark.shared
@pytest.mark.parametrize(
    ("config", "released_files", "ordered"),
    [
        (("scrqa", "dream", "original", None),
         ["scrambled_DREAM_test/zero-shot/original", "scrambled_DREAM_dev/zero-shot/original"], True),
        (("aqua-cot", "aqua", "original", 0), ["scrambled_AQuA/few-shot-cot/demo_random_0%/original"], True),
        # the builder orders RealtimeQA by week file; the authors' order is their own
        (("scrqa", "realtimeqa", "original", None), ["scrambled_realtimeQA/zero-shot/original"], False),
    ],
)
def test_every_request_of_a_built_dataset_is_the_authors_prompt(
    original_build: Path, shared_data: Path, config: tuple, released_files: list[str], ordered: bool
) -> None:
    """Builder rows -> requests: each prompt is one the authors sent, byte for byte, and all of them are."""
    from scrambled_bench.evaluation.data import DataSource
    from scrambled_bench.evaluation.evaluate import plan_requests
    from scrambled_bench.evaluation.tasks import TaskConfig

    task_config = TaskConfig(*config)
    source = DataSource(str(original_build), original_build)
    requests = plan_requests([task_config], source, seed=0, max_new_tokens=256, chat=True, limit=None)[task_config]
    released = [
        text
        for folder in released_files
        for text in _first_inputs(shared_data / "paper_outputs/scrambled_qa" / folder / "gpt-4-0314.jsonl.gz", 10**6)
    ]
    ours = [request.prompt for request in requests]
    assert len(ours) == len(released)
    if ordered:
        assert ours == released
    else:
        assert sorted(ours) == sorted(released)


@pytest.mark.shared
def test_scrrec_recovers_the_authors_408_evidence_texts(original_build: Path, shared_data: Path) -> None:
    """ScrRec's targets are the 408 distinct RealtimeQA evidence texts the authors' ScrRec outputs hold."""
    from scrambled_bench.evaluation.data import DataSource
    from scrambled_bench.evaluation.tasks import TaskConfig, build_requests

    source = DataSource(str(original_build), original_build)
    config = TaskConfig("scrrec-zero-shot", "realtimeqa", "rs50")
    requests = build_requests(config, source.rows("realtimeqa_original"))
    path = shared_data / "paper_outputs/scrambled_rec/scrambled_realtimeQA/zero-shot/random_50%/gpt-4-0314.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        released = [json.loads(line)["original"] for line in handle]
    assert len(requests) == 408
    assert sorted(r.meta["original"] for r in requests) == sorted(released)
