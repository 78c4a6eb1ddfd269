"""Reading the LoCoMo dev split: turns, questions, and evidence ids cleaned and counted.

The dataset's own layout (Maharana et al., ACL 2024): a list of samples, each with
``conversation`` (``session_N`` turn lists, ``session_N_date_time``) and ``qa`` (question,
answer, evidence dia_ids, category). Evidence needs cleaning: some strings hold several ids
(``"D8:6; D9:17"``), some are malformed (``D:11:26``, ``D30:05``) or name no turn.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

DATA_ENV = "CAIRN_LOCOMO"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_DIA_ID = re.compile(r"D[1-9]\d*:[1-9]\d*")
_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


def default_data_path() -> Path:
    """``$CAIRN_LOCOMO`` if set, else ``shared/data/locomo-dev.json`` beside the repository."""
    override = os.environ.get(DATA_ENV)
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session_date: str
    session_at: datetime

    @property
    def indexed_text(self) -> str:
        """How a turn is indexed: ``[session date] speaker: text``."""
        return f"[{self.session_date}] {self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


@dataclass
class CleaningReport:
    """What evidence cleaning dropped, so the numbers can be audited."""

    evidence_ids: int = 0
    malformed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    questions_without_evidence: int = 0
    questions_other_categories: int = 0


def _turns(conversation: dict[str, object]) -> tuple[Turn, ...]:
    sessions = sorted(
        (int(match.group(1)), key) for key in conversation if (match := _SESSION_KEY.fullmatch(key))
    )
    turns: list[Turn] = []
    for _, key in sessions:
        date = str(conversation[f"{key}_date_time"])
        at = datetime.strptime(date, _DATE_FORMAT).replace(tzinfo=UTC)
        for raw in conversation[key]:  # type: ignore[attr-defined]
            turns.append(Turn(raw["dia_id"], raw["speaker"], raw["text"], date, at))
    return tuple(turns)


def _clean_evidence(raw: list[str], known: set[str], report: CleaningReport) -> frozenset[str]:
    kept: set[str] = set()
    for entry in raw:
        for part in entry.split(";"):
            candidate = part.strip()
            report.evidence_ids += 1
            if not _DIA_ID.fullmatch(candidate):
                report.malformed.append(candidate)
            elif candidate not in known:
                report.unknown.append(candidate)
            else:
                kept.add(candidate)
    return frozenset(kept)


def load_conversations(
    path: Path, *, categories: frozenset[int] = frozenset(CATEGORY_NAMES)
) -> tuple[list[Conversation], CleaningReport]:
    """Every conversation with its turns and its questions in ``categories`` that keep at least
    one valid evidence id after cleaning."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    report = CleaningReport()
    conversations: list[Conversation] = []
    for sample in samples:
        turns = _turns(sample["conversation"])
        known = {turn.dia_id for turn in turns}
        questions: list[Question] = []
        for qa in sample["qa"]:
            if qa["category"] not in categories:
                report.questions_other_categories += 1
                continue
            evidence = _clean_evidence(qa["evidence"], known, report)
            if not evidence:
                report.questions_without_evidence += 1
                continue
            questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
        conversations.append(Conversation(sample["sample_id"], turns, tuple(questions)))
    return conversations, report
