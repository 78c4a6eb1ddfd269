"""Choosing recall defaults without grading them on what they were chosen on:
``python -m benchmarks.crossval [--quick] [--no-write]``.

A grid of policies (``GRID``: the relevance floor, the keyword weight and its scale) is ranked
on both evaluations, question by question: LoCoMo dev (categories 1-4, pools gathered as
``benchmarks.sweep`` does) and the fact set (``benchmarks.fact_engine``). One objective
scores a policy on a set of questions, equally weighting LoCoMo R@10, fact-set R@5 on
answerable questions and the fact set's no-answer rate (empty or weak block), among the
policies that keep every LoCoMo category's R@10 at least at ``BASELINE``'s (the defaults before
the fact set) on the same questions:

- in-sample: the policy with the best objective over everything, graded on everything;
- leave-one-conversation-out: for each LoCoMo conversation, the best policy on the other
  conversations (and the whole fact set) is graded on the held-out conversation alone;
- leave-one-user-out: likewise for each fact-set user.

The held-out figures are pooled over folds (each question graded by the policy chosen without
it). The gap between in-sample and held-out is what the choice overfits.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import report
from benchmarks.engine import build_index, gather_pool, select
from benchmarks.fact_engine import FactOutcome, measure, write_store
from benchmarks.fact_recall import no_answer_ok, recall_at
from benchmarks.fact_set import build
from benchmarks.locomo import CATEGORY_NAMES, DATA_ENV, default_data_path
from benchmarks.policies import with_knobs
from benchmarks.quality import prepare
from benchmarks.scoring import Outcome, judge, summarise
from cairn.embed.onnx import OnnxEmbedder
from cairn.recall import DEFAULT_POLICY, RecallPolicy

SECTION = "crossval"
# Two axes in full (floor x keyword scale at weight 0.3), then the query scale at 0.5 on the
# floors that matter: a full three-axis grid costs twice the CPU for cells already dominated.
GRID_AXES: dict[str, tuple[object, ...]] = {
    "relevance_floor": (0.25, 0.3, 0.35, 0.4),
    "keyword_scale": ("best", "query"),
    "keyword_weight": (0.3,),
}
EXTRA: tuple[dict[str, object], ...] = tuple(
    {"relevance_floor": floor, "keyword_scale": "query", "keyword_weight": 0.5}
    for floor in (0.25, 0.3, 0.35, 0.4)
)
R10 = 2  # index of R@10 in benchmarks.scoring.KS
# The defaults before the fact set ("today" in the issue): no category may fall below them.
BASELINE = "relevance_floor 0.3, keyword_scale best, keyword_weight 0.3"


def grid(base: RecallPolicy = DEFAULT_POLICY) -> dict[str, RecallPolicy]:
    """Every combination of ``GRID_AXES`` on top of ``base``, labelled by its values."""
    names = list(GRID_AXES)
    policies: dict[str, RecallPolicy] = {}
    updates = [
        dict(zip(names, values, strict=True)) for values in itertools.product(*GRID_AXES.values())
    ]
    for update in [*updates, *EXTRA]:
        policies[", ".join(f"{k} {v}" for k, v in update.items())] = with_knobs(base, **update)
    return policies


@dataclass
class Graded:
    """Per-policy outcomes on both sets, and which fold each question belongs to."""

    locomo: dict[str, list[Outcome]]
    locomo_folds: list[str]
    facts: dict[str, list[FactOutcome]]


def _locomo(
    policies: Mapping[str, RecallPolicy], quick: bool
) -> tuple[dict[str, list[Outcome]], list[str]]:
    embedder = OnnxEmbedder()
    prepared, _, _ = prepare(default_data_path(), quick=quick, use_cache=True)
    outcomes: dict[str, list[Outcome]] = {label: [] for label in policies}
    folds: list[str] = []
    for item in prepared:
        index = build_index(item, embedder)
        now = index.clock.now()
        for question in item.conversation.questions:
            folds.append(item.conversation.sample_id)
            pool = gather_pool(index, question.text, embedder, DEFAULT_POLICY, 20)
            for label, policy in policies.items():
                ids = select(pool, question.text, policy, now, 20).record_ids
                outcomes[label].append(judge(question, [index.dia_ids[r] for r in ids]))
    return outcomes, folds


def _facts(policies: Mapping[str, RecallPolicy], quick: bool) -> dict[str, list[FactOutcome]]:
    embedder = OnnxEmbedder()
    users = build()[: 3 if quick else None]
    with tempfile.TemporaryDirectory() as folder:
        index = write_store(users, Path(folder) / "facts.db", embedder, use_cache=True)
        result = measure(users, index, embedder, policies)
        index.stores.close()
    return result.policies


def _locomo_r10(rows: Sequence[Outcome]) -> float:
    return summarise(rows).recall[R10] if rows else 0.0


def objective(loco: Sequence[Outcome], facts: Sequence[FactOutcome]) -> float:
    """Mean of LoCoMo R@10, fact-set R@5 (answerable) and fact-set no-answer empty-or-weak."""
    return (_locomo_r10(loco) + recall_at(facts, 5) + no_answer_ok(facts)) / 3


def _category_r10(rows: Sequence[Outcome]) -> dict[int, float]:
    return {
        c: summarise([o for o in rows if o.category == c]).recall[R10]
        for c in {o.category for o in rows}
    }


def best_policy(
    graded: Graded, keep_loco: Callable[[int], bool], keep_fact: Callable[[FactOutcome], bool]
) -> str:
    """The label with the best objective on the kept questions among those that hold every
    LoCoMo category's R@10 at least where ``BASELINE`` has it on the same questions (the
    issue's "no category below today's"); ties: the first label."""

    def kept_loco(label: str) -> list[Outcome]:
        return [o for i, o in enumerate(graded.locomo[label]) if keep_loco(i)]

    floor = _category_r10(kept_loco(BASELINE))
    scores = {}
    for label in graded.locomo:
        loco = kept_loco(label)
        categories = _category_r10(loco)
        if any(categories[c] < floor[c] for c in floor):
            continue
        facts = [o for o in graded.facts[label] if keep_fact(o)]
        scores[label] = objective(loco, facts)
    return max(scores, key=lambda label: scores[label])


@dataclass
class CrossValidated:
    chosen: str
    held_out_locomo: list[Outcome]
    held_out_facts: list[FactOutcome]
    fold_choices: dict[str, str]


def cross_validate(graded: Graded) -> CrossValidated:
    """Leave one LoCoMo conversation out, then one fact-set user out; pool the held-out."""
    chosen = best_policy(graded, lambda _: True, lambda _: True)
    held_loco: list[Outcome] = []
    held_facts: list[FactOutcome] = []
    choices: dict[str, str] = {}
    for fold in dict.fromkeys(graded.locomo_folds):
        label = best_policy(graded, lambda i, f=fold: graded.locomo_folds[i] != f, lambda _: True)
        choices[fold] = label
        held_loco += [
            o for i, o in enumerate(graded.locomo[label]) if graded.locomo_folds[i] == fold
        ]
    users = dict.fromkeys(o.user for o in graded.facts[chosen])
    for user in users:
        label = best_policy(graded, lambda _: True, lambda o, u=user: o.user != u)
        choices[user] = label
        held_facts += [o for o in graded.facts[label] if o.user == user]
    return CrossValidated(chosen, held_loco, held_facts, choices)


def _row(label: str, loco: Sequence[Outcome], facts: Sequence[FactOutcome]) -> list[object]:
    cats = [summarise([o for o in loco if o.category == c]) for c in CATEGORY_NAMES if c <= 4]
    overall = summarise(loco)
    return [
        label,
        f"{overall.recall[1]:.3f}",
        f"{overall.recall[R10]:.3f}",
        *(f"{s.recall[R10]:.3f}" for s in cats),
        f"{recall_at(facts, 5):.3f}",
        f"{no_answer_ok(facts):.1%}",
    ]


def render(graded: Graded, cv: CrossValidated) -> str:
    names = [CATEGORY_NAMES[c] for c in CATEGORY_NAMES if c <= 4]
    header = [
        "policy",
        "LoCoMo R@5",
        "LoCoMo R@10",
        *(f"{n} R@10" for n in names),
        "facts R@5",
        "facts no-answer empty or weak",
    ]
    rows = [
        _row(
            '<a id="crossval-defaults"></a>defaults, in-sample',
            graded.locomo["defaults"],
            graded.facts["defaults"],
        ),
        _row(
            f"best of the grid ({cv.chosen}), in-sample",
            graded.locomo[cv.chosen],
            graded.facts[cv.chosen],
        ),
        _row(
            '<a id="crossval-held-out"></a>best of the grid, cross-validated (held-out folds)',
            cv.held_out_locomo,
            cv.held_out_facts,
        ),
    ]
    grid_rows = [_row(label, graded.locomo[label], graded.facts[label]) for label in graded.locomo]
    picks = sorted(set(cv.fold_choices.values()))
    return "\n".join(
        [
            "### Defaults in-sample and cross-validated",
            "",
            report.table(header, rows),
            "",
            f"Policies chosen by the {len(cv.fold_choices)} folds: "
            + "; ".join(f"`{p}` ({sum(v == p for v in cv.fold_choices.values())})" for p in picks)
            + ".",
            "",
            "### The grid, in-sample",
            "",
            report.table(header, grid_rows),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.crossval", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one conversation, three users")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if not default_data_path().is_file():
        print(f"LoCoMo data not found; set ${DATA_ENV}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    # The defaults may be a cell of the grid: each distinct policy is ranked once.
    policies = {"defaults": DEFAULT_POLICY, **grid()}
    distinct = {policy.model_dump_json(): policy for policy in policies.values()}
    locomo, folds = _locomo(distinct, args.quick)
    facts = _facts(distinct, args.quick)
    graded = Graded(
        locomo={label: locomo[p.model_dump_json()] for label, p in policies.items()},
        locomo_folds=folds,
        facts={label: facts[p.model_dump_json()] for label, p in policies.items()},
    )
    cv = cross_validate(graded)
    given = list(sys.argv[1:] if argv is None else argv)
    markdown = "\n".join(
        [
            "## Choosing the defaults: cross-validated on LoCoMo and the fact set",
            "",
            f"- command: `{' '.join(['python -m benchmarks.crossval', *given])}`",
            f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            f"- grid: {', '.join(f'{k} {list(v)}' for k, v in GRID_AXES.items())}, and "
            "keyword_scale query at keyword_weight 0.5 on each floor; every other knob at its "
            "default; constraint: no LoCoMo category's R@10 below the former defaults' "
            f"(`{BASELINE}`); objective: mean of LoCoMo R@10 (categories 1-4), fact-set R@5 "
            "(answerable) and fact-set no-answer empty-or-weak rate",
            f"- total wall time: {time.perf_counter() - started:.0f} s",
            "",
            render(graded, cv),
        ]
    )
    print(markdown)
    if not (args.quick or args.no_write):
        report.write_section(markdown, SECTION)
        print(f"\nwritten to {report.DOCS_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
