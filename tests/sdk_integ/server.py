"""``cairn serve`` in a subprocess, and the environment that points the SDK's tests at it.

The server is the command a user runs (``python -m cairn serve --port 0``) on a fresh SQLite
store; its first stdout line is the export line, from which the URL is read. The client
environment is what a user sets (the two endpoint variables), plus fake credentials, a region,
an empty AWS configuration, and the variables the SDK's tests read for their fixtures.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
# The SDK's tests want a Kinesis stream and a role the service may assume; cairn assumes no
# role and streams nowhere (docs/agentcore-compatibility.md), so these name nothing real.
KINESIS_ARN = f"arn:aws:kinesis:{REGION}:000000000000:stream/cairn-sdk-integ"
ROLE_ARN = "arn:aws:iam::000000000000:role/cairn-sdk-integ"
_URL = re.compile(r"AWS_ENDPOINT_URL_BEDROCK_AGENTCORE=(\S+)")
_CLEARED = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ENDPOINT_URL",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "BEDROCK_AGENTCORE_CONTROL_ENDPOINT",
)


def python_path() -> str:
    """cairn's sources and this repository first, then whatever was already there."""
    parts = [str(REPO / "shared"), str(REPO), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(part for part in parts if part)


@contextmanager
def cairn_serve(workdir: Path) -> Iterator[str]:
    """Serve a fresh store under ``workdir`` until the block ends; yields the URL."""
    env = {**os.environ, "PYTHONPATH": python_path()}
    store = workdir / "cairn.db"
    with (workdir / "serve.log").open("w") as log:
        process = subprocess.Popen(  # noqa: S603  # our own command, no shell
            [sys.executable, "-m", "cairn", "serve", "--port", "0", "--store", str(store)],
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
            text=True,
        )
        try:
            assert process.stdout is not None
            first = process.stdout.readline()
            found = _URL.search(first)
            if found is None:
                raise RuntimeError(f"cairn serve did not start; see {workdir / 'serve.log'}")
            yield found.group(1)
        finally:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def client_env(url: str, home: Path, prepopulated_id: str) -> dict[str, str]:
    """The environment of a user's process pointed at ``url``, with the SDK tests' inputs."""
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(
        {
            "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE": url,
            "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE_CONTROL": url,
            "AWS_ACCESS_KEY_ID": "AKIDCAIRNSDKINTEG",
            "AWS_SECRET_ACCESS_KEY": "not-a-secret",
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_CONFIG_FILE": str(home / "aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(home / "aws-credentials"),
            "BEDROCK_TEST_REGION": REGION,
            "MEMORY_KINESIS_ARN": KINESIS_ARN,
            "MEMORY_ROLE_ARN": ROLE_ARN,
            "MEMORY_PREPOPULATED_ID": prepopulated_id,
            "PYTHONPATH": python_path(),
        }
    )
    return env
