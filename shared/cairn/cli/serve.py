"""``cairn serve``: the AgentCore Memory API on the embedded store, for unmodified clients.

It prints the line that points boto3 / bedrock-agentcore / Strands at it, then serves until
interrupted. It is not an authentication boundary: any well-formed SigV4 signature is accepted
(see ``cairn.api.auth``), so it listens on loopback unless told otherwise, and ``--token``
(or ``CAIRN_TOKEN``) makes it refuse callers without the shared token; ``--principals FILE``
admits only the principals the file lists, each to its own actors (``cairn.api.principals``).
Events posted to it are extracted in the background (``cairn.local.api``), payloads staged
beside the store.
"""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cairn.cli.args import CliParser
from cairn.cli.providers import add_provider_options, model_from
from cairn.errors import ConfigurationError

if TYPE_CHECKING:
    from cairn.api.router import Api
    from cairn.api.server import ApiServer

DEFAULT_PORT = 8700
MAX_PORT = 65535
TOKEN_ENV = "CAIRN_TOKEN"  # noqa: S105  # a variable name, not a secret


def add_serve_command(commands: argparse._SubParsersAction[CliParser], store_help: str) -> None:
    summary = (
        "serve the AgentCore Memory API (boto3 bedrock-agentcore clients, the "
        "bedrock-agentcore SDK, Strands) on the embedded store"
    )
    sub = commands.add_parser("serve", help=summary, description=summary)
    sub.set_defaults(run=serve)
    sub.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: %(default)s)"
    )
    sub.add_argument(
        "--port",
        type=parse_port,
        default=DEFAULT_PORT,
        help="0 to 65535; 0 picks a free port (default: %(default)s)",
    )
    sub.add_argument(
        "--token",
        default=None,
        help=f"refuse requests without this shared token (env {TOKEN_ENV}); clients send it "
        "with cairn.api.client.use_cairn(session, token=...)",
    )
    sub.add_argument(
        "--principals",
        type=Path,
        default=None,
        metavar="FILE",
        help="a JSON or TOML file of principals: each token (its sha256) mapped to the actors "
        "and namespaces it may touch and its access (read, write, control); replaces --token "
        "(docs/security.md)",
    )
    sub.add_argument("--region", default="us-east-1", help="the region in memory ARNs")
    sub.add_argument(
        "--embedder",
        choices=["onnx", "none"],
        default="onnx",
        help="onnx: the local MiniLM model (default); none: keyword recall only",
    )
    sub.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=store_help)
    add_provider_options(sub)


def parse_port(text: str) -> int:
    """A TCP port number, ``0..65535`` (0: any free port)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"takes a port number from 0 to {MAX_PORT} (0 picks a free one), got {text!r}"
        )
    return value


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _is_every_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return host == ""


def client_url(host: str, port: int) -> str:
    """The URL a client on this machine uses: a wildcard address is reached over loopback."""
    return f"http://{'127.0.0.1' if _is_every_address(host) else host}:{port}"


def bind(api: Api, host: str, port: int) -> ApiServer:
    """The bound server; a port in use or an address not of this machine is a clear error."""
    from cairn.api.server import make_server

    try:
        return make_server(api, host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise ConfigurationError(
                f"port {port} on {host} is already in use (another `cairn serve`?); stop that "
                "process, or pick another port with --port (--port 0 picks a free one)"
            ) from exc
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise ConfigurationError(
                f"not allowed to listen on port {port} of {host} (ports below 1024 usually "
                "need privileges); pick another with --port"
            ) from exc
        raise ConfigurationError(
            f"cannot listen on {host!r} ({exc.strerror or exc}); pass an address of this "
            "machine with --host, e.g. 127.0.0.1 (or 0.0.0.0 for every interface)"
        ) from exc


def serve(args: argparse.Namespace) -> int:
    """Serve until interrupted; prints notes on stderr, then the export line on stdout."""
    from cairn.api import ApiSettings
    from cairn.api.server import export_line
    from cairn.clock import SystemClock
    from cairn.local import serve_embedded
    from cairn.local.store import open_store

    token = args.token or os.environ.get(TOKEN_ENV) or None
    principals = None
    if args.principals is not None:
        from cairn.api.principals import load_principals

        if token is not None:
            raise ConfigurationError(
                f"give --principals or --token ({TOKEN_ENV}), not both: with principals each "
                "token is a principal's, listed in the file"
            )
        principals = load_principals(args.principals)  # a bad file is reported first
    model = model_from(args)  # a wrong --provider/--model is reported before anything opens
    clock = SystemClock()
    embedder = None
    if args.embedder == "onnx":
        from cairn.embed.onnx import OnnxEmbedder

        embedder = OnnxEmbedder()
    stores = open_store(args.store, clock, create=True)
    settings = ApiSettings(region=args.region, token=token, principals=principals)
    # Events posted to a memory with strategies are extracted in the background by the model
    # --provider selects: the offline rules by default, as `cairn demo`, or a local model
    # server (docs/extraction.md).
    served = serve_embedded(
        stores,
        args.store,
        embedder=embedder,
        model=model,
        clock=clock,
        settings=settings,
    )
    try:
        server = bind(served.api, args.host, args.port)
        host, port = str(server.server_address[0]), int(server.server_address[1])
        print(
            f"cairn serve: AgentCore Memory API on {host}:{port}, store {args.store}; "
            "Ctrl-C to stop",
            file=sys.stderr,
        )
        if _is_every_address(args.host):
            print(
                f"cairn serve: listening on every interface; from another machine use "
                f"http://<this machine's address>:{port}",
                file=sys.stderr,
            )
        if not _is_loopback(args.host) and token is None and principals is None:
            print(
                "cairn serve: warning: listening beyond loopback without --token; any caller "
                "with any AWS signature can read and write this memory",
                file=sys.stderr,
            )
        try:
            # The export line last: once a client reads it, a Ctrl-C is a clean stop.
            print(export_line(client_url(host, port)), flush=True)
            server.serve_forever()
        except KeyboardInterrupt:
            print("cairn serve: stopped", file=sys.stderr)
        finally:
            server.server_close()
    finally:
        served.close()
    return 0
