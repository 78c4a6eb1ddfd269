"""cairn.history: the history channel, every turn kept verbatim and made drillable.

- ``turns``: a session's turns as the pyramid numbers them;
- ``pyramid``: the pure rollup planner (complete batches of ten -> the next level up);
- ``prompts`` / ``offline_rules``: what a rollup asks the model, and the offline answer;
- ``rollup``: the job that runs the planner through the ``ModelProvider`` port;
- ``boot_window``: a token-budgeted view of a whole session at decreasing resolution;
- ``axes``: recall by period, by typed link and by drill-down.

The chunks themselves are ``cairn.chunks`` (the data contract) behind the ``ChunkStore`` port.
"""

from cairn.history.rollup import RollupReport, roll_up_scope, roll_up_session

__all__ = ["RollupReport", "roll_up_scope", "roll_up_session"]
