"""``cairn mcp``: the embedded store as a Model Context Protocol server, over stdio.

Desktop and IDE agents (any MCP client) get four tools, every one pinned to the one actor the
server was started for (``--actor``, ``CAIRN_ACTOR`` or ``cairn.toml``), so no tool argument can
reach another actor's memory:

- ``remember(text, category)``: file one fact (an exact repeat folds in);
- ``recall(query, top_k)``: the rendered block and the journal id that pins it;
- ``history(record_id)``: every version of a record, with its sources;
- ``forget(record_id, reason)``: retract softly (the content stays in the history).

What an agent files is labelled with the source ``--source`` names, ``model`` by default: a
model deciding to remember is not the user stating a fact, so it is untrusted (DESIGN §2), as
the runtime's ``learn`` tool does. Failures reach the client as tool errors with cairn's
one-line message; nothing is written to stdout but the protocol, and no content is logged.
Built on the official ``mcp`` Python SDK (the ``mcp`` extra).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from cairn.cli.args import SOURCE_KINDS, CliParser
from cairn.cli.providers import add_provider_options, model_from

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from cairn.local.memory import LocalMemory
    from cairn.models import SourceKind


def add_mcp_command(
    commands: argparse._SubParsersAction[CliParser], parents: Sequence[CliParser]
) -> CliParser:
    summary = (
        "serve one actor's memory to MCP clients (desktop and IDE agents) over stdio: "
        "tools remember, recall, history, forget"
    )
    sub = commands.add_parser("mcp", help=summary, description=summary, parents=list(parents))
    sub.set_defaults(run=run_mcp)
    sub.add_argument(
        "--source",
        choices=SOURCE_KINDS,
        default="model",
        help="the source of what the agent remembers (default: %(default)s, untrusted)",
    )
    add_provider_options(sub)
    return sub


@contextmanager
def _reported() -> Iterator[None]:
    """A cairn or validation failure as the tool error the client's model reads."""
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    from cairn.cli.errors import describe_validation_error
    from cairn.errors import CairnError

    try:
        yield
    except CairnError as exc:
        raise ToolError(exc.message) from exc
    except ValidationError as exc:
        raise ToolError(describe_validation_error(exc)) from exc


def build_server(memory: LocalMemory, source: SourceKind) -> MCPServer:
    """The MCP server whose tools work on ``memory``'s scope and nothing else."""
    from mcp.server.mcpserver import MCPServer

    from cairn.cli.output import version_lines

    actor = memory.scope.actor_id
    server: MCPServer = MCPServer(
        name="cairn",
        instructions=f"Long-term memory of actor {actor}: recall before answering, remember "
        "durable facts and preferences, forget what the user says is no longer true.",
        log_level="WARNING",
    )

    @server.tool(description="Remember one durable fact about the user (one line).")
    def remember(text: str, category: str = "fact") -> str:
        with _reported():
            written = memory.remember(text, category=category, source=source)
        return f"remembered {written.record_id} v{written.version} ({written.trust.value})"

    @server.tool(description="Recall what is relevant to a query; returns a labelled block.")
    def recall(query: str, top_k: int = 8) -> str:
        with _reported():
            found = memory.recall(query, top_k=top_k)
        return f"{found.block}\njournal: {found.journal_id}"

    @server.tool(description="Every version of one record, oldest first, with its sources.")
    def history(record_id: str) -> str:
        with _reported():
            versions = memory.history(record_id)
        return "\n".join(line for version in versions for line in version_lines(version))

    @server.tool(description="Forget a record softly: recall stops returning it.")
    def forget(record_id: str, reason: str | None = None) -> str:
        with _reported():
            written = memory.forget(record_id, reason=reason)
        return f"forgot {written.record_id} (now v{written.version}, {written.status.value})"

    return server


def run_mcp(args: argparse.Namespace) -> int:
    """Serve MCP over stdin/stdout until the client closes the stream."""
    from cairn.local.memory import open_memory
    from cairn.models import SourceKind

    model = model_from(args)
    with open_memory(args.store, actor=args.actor, memory=args.memory, model=model) as memory:
        build_server(memory, SourceKind(args.source)).run("stdio")
    return 0
