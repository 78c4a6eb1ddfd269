"""What an agent imports: ``MemorySession`` (batched turns, recall assembled once per run) and
the memory tools (``learn``, ``memory_edit``, ``memory_recall``) in the shapes hosts use.

    session = MemorySession.local(stores, memory_id="default", actor_id="tg:42",
                                  session_id="2026-03-01", embedder=OnnxEmbedder())
    run = session.start_run(user_message)          # recall happens here, once
    system = run.system_prompt("You are a helpful assistant.")
    tools = run.tools.converse_tool_config()        # None when there is no store
    ...
    run.add_turn("USER", user_message); run.add_turn("ASSISTANT", answer)
    session.close()                                 # writes what is still buffered

See docs/runtime.md.
"""

from cairn.runtime.options import SessionOptions
from cairn.runtime.run import Run
from cairn.runtime.session import MemorySession
from cairn.runtime.session_store import Recalled, RecalledItem, SessionStore, Written
from cairn.runtime.tool_definitions import ToolDefinition, ToolOutcome
from cairn.runtime.tool_inputs import (
    DEFAULT_RESULTS,
    LEARN,
    MAX_ENTRY_BYTES,
    MAX_QUERY_BYTES,
    MAX_RESULTS,
    MEMORY_EDIT,
    MEMORY_RECALL,
)
from cairn.runtime.tools import MemoryTools

__all__ = [
    "DEFAULT_RESULTS",
    "LEARN",
    "MAX_ENTRY_BYTES",
    "MAX_QUERY_BYTES",
    "MAX_RESULTS",
    "MEMORY_EDIT",
    "MEMORY_RECALL",
    "MemorySession",
    "MemoryTools",
    "Recalled",
    "RecalledItem",
    "Run",
    "SessionOptions",
    "SessionStore",
    "ToolDefinition",
    "ToolOutcome",
    "Written",
]
