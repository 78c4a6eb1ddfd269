"""The agent demo's script: three runs of a Converse agent loop, with a scripted offline model.

The model is scripted (no LLM is called): each reply is fixed, or computed from what the model
was shown (the recall block in its system prompt, a tool's result), so whatever it says about
memory is read from the real store through the real session, tools and loop.

- run 1 (session ``agent-demo-1``): the user reports a failed deploy; the model files a lesson
  with ``learn``.
- run 2 (session ``agent-demo-2``, a new process): the user is about to deploy; the lesson is
  in the run's recall block, and the model's answer cites it by id.
- run 3 (same session): the user says the lesson no longer holds; the model finds it with
  ``memory_recall`` and rewrites it with ``memory_edit`` (a new version of the same record).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cairn.models import Scope
from cairn.testing.scripted_converse import (
    Reply,
    Response,
    last_tool_results,
    say,
    system_text,
    use_tool,
)

DEMO_AGENT_SCOPE = Scope(memory_id="default", actor_id="agent-demo-user")
MODEL_ID = "cairn-demo-scripted-model"
SYSTEM_PROMPT = (
    "You are a release assistant for a small engineering team. When a lesson will help in "
    "future runs, file it with `learn`; when the user says one no longer holds, fix it with "
    "`memory_edit`."
)

LESSON = (
    "Run the database migrations before deploying to staging; deploying first fails on "
    "missing columns."
)
EDITED_LESSON = (
    "Staging runs the database migrations automatically on boot; no manual migration step "
    "is needed before deploying."
)
_RECORD_ID = re.compile(r"\bmem-[A-Za-z0-9_\-]{36,46}\b")


@dataclass(frozen=True)
class DemoRun:
    """One run: what the user says, and the model's replies in order."""

    label: str
    user: str
    replies: tuple[Reply, ...]


@dataclass(frozen=True)
class DemoSession:
    session_id: str
    title: str
    runs: tuple[DemoRun, ...]


def _cite_the_lesson(request: Mapping[str, Any]) -> Response:
    """Answer from the recall block the model was given: cite the migration lesson by id."""
    for line in system_text(request).splitlines():
        found = _RECORD_ID.search(line)
        if found and "migrations" in line:
            return say(
                "Yes: run the database migrations before you deploy. I learned that last "
                f"time ({found.group()})."
            )
    return say("I don't recall anything about staging deploys.")


def _rewrite_the_lesson(request: Mapping[str, Any]) -> Response:
    """Edit the first memory ``memory_recall`` returned: a corrected version of it."""
    results = [hit for result in last_tool_results(request) for hit in result.get("results", ())]
    if not results:
        return say("I found no lesson about migrations to update.")
    return use_tool(
        "memory_edit",
        {
            "action": "update",
            "record_id": results[0]["record_id"],
            "content": EDITED_LESSON,
            "reason": "staging now migrates on boot",
        },
    )


SESSIONS: dict[str, DemoSession] = {
    "learn": DemoSession(
        "agent-demo-1",
        "Monday: a failed deploy",
        (
            DemoRun(
                label="run 1",
                user="The staging deploy failed again: the new billing columns were missing. "
                "Turns out the migrations have to run before the deploy, not after.",
                replies=(
                    use_tool(
                        "learn",
                        {"lesson": LESSON, "tags": ["deploy", "staging"]},
                        text="That is worth remembering.",
                    ),
                    say("Filed as a lesson: next time, migrations first."),
                ),
            ),
        ),
    ),
    "recall-and-edit": DemoSession(
        "agent-demo-2",
        "Thursday: the next deploy",
        (
            DemoRun(
                label="run 2",
                user="I'm about to deploy the billing service to staging. Anything I should "
                "do first?",
                replies=(_cite_the_lesson,),
            ),
            DemoRun(
                label="run 3 (its block was assembled before the edit, and keeps the old text)",
                user="Update: staging now runs the migrations automatically on boot, so "
                "nobody needs to run them by hand before a deploy any more.",
                replies=(
                    use_tool(
                        "memory_recall",
                        {"query": "database migrations before deploying to staging"},
                    ),
                    _rewrite_the_lesson,
                    say("Updated the lesson: staging migrates on boot now."),
                ),
            ),
        ),
    ),
}
