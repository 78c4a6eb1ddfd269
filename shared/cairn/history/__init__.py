"""cairn.history: the history channel, every turn kept verbatim and made drillable.

- ``turns``: a session's turns as the pyramid numbers them;
- ``pyramid``: the pure rollup planner (complete batches of ten -> the next level up);
- ``prompts`` / ``offline_rules``: what a rollup asks the model, and the offline answer;
- ``rollup``: the pass that runs the planner through the ``ModelProvider`` port;
- ``job`` / ``worker``: the rollup as a logged, switchable job, and in the embedded worker;
- ``boot_window``: a token-budgeted view of a whole session at decreasing resolution;
- ``axes``: recall by period, by a period a question names, by typed link, by drill-down;
- ``search``: semantic recall over records, turns and chunks in one ranking, steered by time.

The chunks themselves are ``cairn.chunks`` (the data contract) behind the ``ChunkStore`` port;
docs/history.md explains when an agent uses this channel and when the records.
"""

from cairn.history.axes import about_time, by_period, children, enclosing, neighbors
from cairn.history.boot_window import BootWindow, read_window
from cairn.history.job import run_rollup_job
from cairn.history.rollup import RollupReport, roll_up_scope, roll_up_session
from cairn.history.search import BothChannels, Hit, recall_both

__all__ = [
    "BootWindow",
    "BothChannels",
    "Hit",
    "RollupReport",
    "about_time",
    "by_period",
    "children",
    "enclosing",
    "neighbors",
    "read_window",
    "recall_both",
    "roll_up_scope",
    "roll_up_session",
    "run_rollup_job",
]
