"""Category 5 (adversarial) apart: questions built to mislead, scored like the others.

LoCoMo's adversarial questions ask about something the conversation attributes to someone else
("What did Caroline realize after her charity race?" when Melanie ran it); their evidence is the
turn that shows what really happened. They are kept out of every other table, as the dataset's
own evaluation does, and measured here alone: the baselines and cairn's defaults, ranked to 20.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import report
from benchmarks.engine import build_index, gather_pool, select
from benchmarks.locomo import load_conversations
from benchmarks.policies import idea_value, ideas_off, with_knobs
from benchmarks.retrieval import DEPTH, Prepared, Retriever
from benchmarks.scoring import Outcome, judge, summarise
from benchmarks.vectors import embed_all
from cairn.ports import Embedder
from cairn.recall import DEFAULT_POLICY

ADVERSARIAL = frozenset({5})
DEFAULTS_LABEL = "cairn recall, defaults, ranked to 20"


@dataclass
class AdversarialResult:
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)


def _prepared(
    data: Path, embedder: Embedder, limit: int, use_cache: bool, quiet: bool
) -> list[Prepared]:
    conversations, _ = load_conversations(data, categories=ADVERSARIAL)
    conversations = conversations[:limit]
    turns = [t.indexed_text for c in conversations for t in c.turns]
    questions = [q.text for c in conversations for q in c.questions]
    turn_vectors, _ = embed_all(
        embedder, turns, use_cache=use_cache, label="embedding turns", quiet=quiet
    )
    question_vectors, _ = embed_all(
        embedder,
        questions,
        use_cache=use_cache,
        label="embedding adversarial questions",
        quiet=quiet,
    )
    prepared: list[Prepared] = []
    t_at = q_at = 0
    for c in conversations:
        t_end, q_end = t_at + len(c.turns), q_at + len(c.questions)
        prepared.append(Prepared(c, turn_vectors[t_at:t_end], question_vectors[q_at:q_end]))
        t_at, q_at = t_end, q_end
    return prepared


def measure_adversarial(
    data: Path,
    embedder: Embedder,
    baselines: dict[str, Retriever],
    *,
    limit: int,
    use_cache: bool,
    quiet: bool = False,
) -> AdversarialResult:
    """R@k of the baselines and of cairn's defaults on the category-5 questions of the first
    ``limit`` conversations."""
    result = AdversarialResult()
    prepared = _prepared(data, embedder, limit, use_cache, quiet)
    for name, retriever in baselines.items():
        result.outcomes[name] = [
            judge(q, ids)
            for item in prepared
            for q, ids in zip(item.conversation.questions, retriever(item), strict=True)
        ]
    speakers = idea_value("entity_weight")
    policies = {
        "cairn recall, ideas off, ranked to 20": ideas_off(),
        DEFAULTS_LABEL: DEFAULT_POLICY,
        f"cairn recall, defaults with speakers on (entity_weight {speakers:g}), ranked to 20": (
            with_knobs(DEFAULT_POLICY, entity_weight=speakers)
        ),
    }
    engine: dict[str, list[Outcome]] = {label: [] for label in policies}
    for item in prepared:
        index = build_index(item, embedder)
        now = index.clock.now()
        for question in item.conversation.questions:
            pool = gather_pool(index, question.text, embedder, DEFAULT_POLICY, DEPTH)
            for label, policy in policies.items():
                ids = select(pool, question.text, policy, now, DEPTH).record_ids
                engine[label].append(judge(question, [index.dia_ids[r] for r in ids]))
    result.outcomes.update(engine)
    return result


def render_adversarial(result: AdversarialResult) -> str:
    rows: list[Sequence[object]] = []
    for name, outcomes in result.outcomes.items():
        label = name
        if name == DEFAULTS_LABEL:
            label = f'<a id="quality-adversarial"></a>{name}'
        rows.append(report.summary_row(label, summarise(outcomes)))
    return "\n".join(
        [
            "### Adversarial questions (category 5), apart",
            "",
            "Kept out of every table above, as LoCoMo's own evaluation does; each asks about "
            "something the conversation attributes to someone else, and its evidence is the "
            "turn that shows what really happened. Speaker awareness is what they exploit: "
            "the question names the wrong person, so lifting that person's turns pushes the "
            "evidence down from the top (compare the defaults with speakers on), which is why "
            "`entity_weight` is off by default.",
            "",
            report.table(report.summary_header("retriever"), rows),
            "",
        ]
    )
