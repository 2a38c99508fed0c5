#!/usr/bin/env bash
# weatkit's CUDA paths, checked and timed in the minutes a GPU machine is lent (issue 36 §4).
#
#   bash benchmarks/gpu_check.sh            # from anywhere; runs in the repository root
#
# Steps (each with a hard time limit, all of them within GPU_CHECK_BUDGET seconds, 570 by
# default, so the whole check fits in 10 minutes with Python's start-ups):
#   install     only when weatkit does not import: pip install from a local wheel folder
#               (WEATKIT_WHEELS) with -c constraints.txt -e ".[test]"; not counted in the budget
#   info        nvidia-smi, torch.cuda, which of bitsandbytes / vllm / ray import
#   cuda-tests  the tests that need CUDA (they skip themselves elsewhere): -k "cuda or gpu"
#   invariance  tests/test_invariance.py (not slow), whose I6 compares float32 CUDA with CPU
#   hf-cuda     weatkit crows on CUDA in float32, bfloat16, float16, --device-map auto,
#               8-bit and 4-bit (where bitsandbytes imports) against float32 on the CPU
#   oom         --batch-size auto against a real CUDA out-of-memory: halves, then finishes
#   engine      the CA-WEAT paper grid (2,912 WEATs) on CUDA and on the CPU: times, differences
#   throughput  a random-weight ~1.1B Llama: CrowS-Pairs token log-probs, hf and vllm
#
# Output: one line per step, and per figure inside a step (benchmarks/gpu_check.py), as
#   STEP <name> <ok|fail|skip|timeout> <seconds> key=value ...
# so `grep ^STEP` gives the figures to paste into BENCHMARKS.md. Without a CUDA device every
# step prints "skip ... reason=no_CUDA_device" and the script exits 0 within seconds.
# Exit status: 1 when a step failed or timed out, else 0.
#
# Environment: PYTHON (default python), WEATKIT_DATA (default ../shared/data), WEATKIT_WHEELS
# (a folder of wheels for the install step), VLLM_PYTHON (a Python whose environment has vllm,
# default PYTHON), GPU_CHECK_BUDGET (seconds for all steps, default 570), GPU_CHECK_STEPS (the
# steps to run, e.g. "info engine"; default all), GPU_CHECK_DRY_RUN=1 (no CUDA needed: the Python
# steps run on the CPU at small sizes, to check their code before a GPU is lent; see
# benchmarks/gpu_check.py).
set -u
cd "$(dirname "$0")/.." || exit 2
REPO=$(pwd)
PY=${PYTHON:-python}
VLLM_PY=${VLLM_PYTHON:-$PY}
BUDGET=${GPU_CHECK_BUDGET:-570}
ALL_STEPS="install info cuda-tests invariance hf-cuda oom engine throughput"
STEPS=" ${GPU_CHECK_STEPS:-$ALL_STEPS} "
DRY_RUN=${GPU_CHECK_DRY_RUN:-0}
export GPU_CHECK_DRY_RUN=$DRY_RUN
if [ -z "${WEATKIT_DATA:-}" ] && [ -d "$REPO/../shared/data" ]; then
    WEATKIT_DATA=$(cd "$REPO/../shared/data" && pwd)
fi
export WEATKIT_DATA=${WEATKIT_DATA:-}
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/weatkit-gpu-check.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
# a cache of its own (no value computed elsewhere is served), nothing from the network
export PY VLLM_PY SCRATCH
export WEATKIT_CACHE="$SCRATCH/cache" HF_HOME="$SCRATCH/hf" HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
STARTED=$SECONDS
STATUS=0

line() {  # STEP name status seconds detail...
    echo "STEP $*"
}

# run_step NAME LIMIT COMMAND...: COMMAND under a hard limit (the smaller of LIMIT and what is
# left of the budget), its output shown as it comes, then one STEP line with its status.
run_step() {
    local name=$1 limit=$2
    shift 2
    if [[ "$STEPS" != *" $name "* ]]; then
        line "$name skip 0.0 reason=not_in_GPU_CHECK_STEPS"
        return
    fi
    local left=$((BUDGET - (SECONDS - STARTED)))
    if [ "$left" -lt 15 ]; then
        line "$name skip 0.0 reason=budget_spent budget_s=$BUDGET"
        return
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    local t0=$SECONDS rc
    timeout --kill-after=10 "$limit" "$@"
    rc=$?
    local took=$((SECONDS - t0))
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        line "$name timeout $took limit_s=$limit"
        STATUS=1
    elif [ "$rc" -ne 0 ]; then
        line "$name fail $took exit=$rc limit_s=$limit"
        STATUS=1
    else
        line "$name ok $took limit_s=$limit"
    fi
}

skip_all() {  # every step, skipped with one reason
    for name in $ALL_STEPS; do
        line "$name skip 0.0 reason=$1"
    done
}

# --- is there a CUDA device at all? (no Python needed to say no) ----------------------------
if [ "$DRY_RUN" = 1 ]; then
    :  # the steps run on the CPU
elif ! command -v nvidia-smi > /dev/null 2>&1; then
    skip_all "no_CUDA_device(no_nvidia-smi)"
    exit 0
elif ! timeout 60 "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
    > /dev/null 2>&1; then
    if ! timeout 60 "$PY" -c "import torch" > /dev/null 2>&1; then
        skip_all "torch_does_not_import_with_$PY"
    else
        skip_all "no_CUDA_device(torch.cuda.is_available()=False)"
    fi
    exit 0
fi

# --- install, only when needed, from local wheels -------------------------------------------
if timeout 120 "$PY" -c "import weatkit, pytest, transformers" > /dev/null 2>&1; then
    line "install skip 0.0 reason=weatkit_imports_already"
elif [ -n "${WEATKIT_WHEELS:-}" ] && [ -d "$WEATKIT_WHEELS" ]; then
    t0=$SECONDS
    if timeout 300 "$PY" -m pip install -q --no-index --find-links "$WEATKIT_WHEELS" \
        -c constraints.txt -e ".[test]"; then
        line "install ok $((SECONDS - t0)) wheels=$WEATKIT_WHEELS"
    else
        line "install fail $((SECONDS - t0)) wheels=$WEATKIT_WHEELS"
        exit 1
    fi
    STARTED=$SECONDS  # the budget is for the checks
else
    line "install fail 0.0 reason=weatkit_does_not_import_and_WEATKIT_WHEELS_is_not_a_folder"
    exit 1
fi

# --- the steps ------------------------------------------------------------------------------
info() {
    if command -v nvidia-smi > /dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,compute_cap \
            --format=csv,noheader || nvidia-smi
    fi
    "$PY" benchmarks/gpu_check.py info
}
export -f info
run_step info 30 bash -c info

# the tests that need CUDA skip themselves without it; here they must run (-rs lists skips)
run_step cuda-tests 100 "$PY" -m pytest -q -rs -p no:cacheprovider -k "cuda or gpu" \
    tests/test_engine.py tests/test_contextual_run.py tests/test_isomorphism_measures.py \
    tests/test_models_handle.py tests/test_scoring_vllm.py tests/test_models_loading.py

# I1-I4 and I6 (float32 CUDA against CPU); -rs: a skipped I6 would show here
run_step invariance 75 "$PY" -m pytest -q -rs -p no:cacheprovider -m "not slow" \
    tests/test_invariance.py

run_step hf-cuda 90 "$PY" benchmarks/gpu_check.py hf-cuda
run_step oom 60 "$PY" benchmarks/gpu_check.py oom
run_step engine 60 "$PY" benchmarks/gpu_check.py engine

throughput() {
    # --foreground: in the step's process group, so that the step's limit stops them too
    local dir="$SCRATCH/llama-1b/model" rc=0
    timeout --foreground 40 "$PY" benchmarks/gpu_check.py build-1b "$dir" || return 1
    timeout --foreground 50 "$PY" benchmarks/gpu_check.py throughput-hf "$dir" || rc=1
    # vLLM's start (weights, CUDA graphs) takes most of its time; the outer limit stops it
    "$VLLM_PY" benchmarks/gpu_check.py throughput-vllm "$dir" || rc=1
    return $rc
}
export -f throughput
run_step throughput 300 bash -c throughput  # all that is left of the budget, 300 s at most

line "total $([ $STATUS -eq 0 ] && echo ok || echo fail) $((SECONDS - STARTED)) budget_s=$BUDGET"
exit $STATUS
