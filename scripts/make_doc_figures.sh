#!/usr/bin/env bash
# Remake the documentation's figures (docs/figures/) from real runs of the embedded SmolLM2-135M-Instruct:
#
#   quickstart_scrqa.png      the quick start's run (`scrambled-bench run`), then `report RUN --plot`
#   report_scrqa_paper.png    two 12-sample RealtimeQA runs (chat and completion prompts) beside six of the
#                             paper's models, `report ... --paper ... --plot`
#   variants_page.png,        the HTML page of `report --from lm-eval`, its top and its logged instances: the
#   variants_instances.png    tests' letter-choice task scrambled by `scramble lm-eval:`, run by
#                             `lm_eval --model hf` on the de-quantised SmolLM2, shot in headless Chromium
#
# The probe's figure (probe_figure7.png) is a 24-minute run of its own; its command is in docs/probing.md.
#
# Usage, from anywhere, in the test environment (docs/contributing.md: the `local` and `harness` extras), with
# Debian's `chromium` on PATH:
#
#   bash scripts/make_doc_figures.sh [WORKDIR [quick|paper|variants ...]]
#
# WORKDIR (default: a new temporary folder) keeps the runs, so a second call resumes them; with no stage
# named, all three are made. The first run builds the datasets from GitHub, or from the mirror that
# SCRAMBLED_BENCH_SOURCE_DIR names. On 2 shared CPU cores: quick and variants about a minute each, paper about
# ten.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="$ROOT/.venv/bin"
FIGURES="$ROOT/docs/figures"
if [ $# -gt 0 ]; then WORK="$1"; shift; else WORK="$(mktemp -d)"; fi
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
STAGES="${*:-quick paper variants}"
export MPLBACKEND=Agg NO_COLOR=1
cd "$WORK"
mkdir -p "$FIGURES"

# A PNG as the site shows it: as made where it is under 300 KB, else with a palette of 256 colours.
shrink() {
  "$BIN/python" - "$1" "$2" <<'PY'
import sys
from pathlib import Path

from PIL import Image

source, target = Path(sys.argv[1]), Path(sys.argv[2])
target.write_bytes(source.read_bytes())
if target.stat().st_size >= 300 * 1024:
    Image.open(source).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
print(f"{target}: {target.stat().st_size:,} bytes")
PY
}

# Two views of an HTML page in headless Chromium (the test suite's driver, tests/chromium.py), 1200 x 1000
# pixels: its top, and the element of the id given scrolled into view.
shoot() {
  PYTHONPATH="$ROOT/tests" "$BIN/python" - "$@" <<'PY'
import sys
from pathlib import Path

from chromium import Browser, find_chromium

page, top, element, scrolled = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
browser = Browser(find_chromium())
try:
    for out, script in ((top, "0"), (scrolled, f"document.getElementById({element!r}).scrollIntoView(); 0")):
        shot = browser.render(page, script, width=1200, height=1000)
        assert not shot.console_errors, shot.console_errors
        Path(out).write_bytes(shot.screenshot)
finally:
    browser.close()
PY
}

for stage in $STAGES; do
  case "$stage" in
    quick)
      # the quick start's command, then its report with the figures
      "$BIN/scrambled-bench" run --run-dir runs/quickstart --no-progress
      "$BIN/scrambled-bench" report runs/quickstart --plot quick-figures
      shrink quick-figures/scrqa.png "$FIGURES/quickstart_scrqa.png"
      ;;
    paper)
      types=original,rs20,rs50,rs100,kf,kfl,sub
      "$BIN/scrambled-bench" run --tasks scrqa,scrrec-zero-shot -d realtimeqa -t "$types" --limit 12 \
        --run-dir runs/paper-chat --no-progress
      "$BIN/scrambled-bench" run --tasks scrqa,scrrec-zero-shot -d realtimeqa -t "$types" --limit 12 \
        --prompt-mode completion --run-dir runs/paper-completion --no-progress
      "$BIN/scrambled-bench" report runs/paper-chat runs/paper-completion \
        --paper gpt-4,gpt-3.5-turbo,falcon-180b,llama-2-70b,llama-2-7b,flan-t5-xxl --plot paper-figures
      shrink paper-figures/scrqa.png "$FIGURES/report_scrqa_paper.png"
      ;;
    variants)
      # the task reads its data file relative to where `scramble` and `lm_eval` run: a copy of its folder; the
      # checkpoint is linked into it under the model's name, which lm-eval logs for a local model
      rm -rf quiz quiz-scrambled quiz-out
      cp -r "$ROOT/tests/fixtures/letter_quiz" quiz
      ln -s "$("$BIN/scrambled-bench" dequantise)" quiz/SmolLM2-135M-Instruct
      (
        cd quiz
        export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
        "$BIN/scrambled-bench" scramble lm-eval:letter_quiz --include-path . --columns question,choices \
          --types kfl,sub --out ../quiz-scrambled
        "$BIN/python" -m lm_eval run --model hf --model_args pretrained=SmolLM2-135M-Instruct,dtype=float32 \
          --include_path ../quiz-scrambled/lm_eval --tasks letter_quiz_scrambled --batch_size 8 \
          --log_samples --output_path ../quiz-out
      )
      "$BIN/scrambled-bench" report --from lm-eval quiz-out --format html -o variants.html
      shoot variants.html variants_top.png instances variants_instances.png
      shrink variants_top.png "$FIGURES/variants_page.png"
      shrink variants_instances.png "$FIGURES/variants_instances.png"
      ;;
    *)
      echo "error: unknown stage '$stage' (quick, paper, variants)" >&2
      exit 2
      ;;
  esac
done
echo "figures in $FIGURES; runs in $WORK"
