"""``make test-sdk``: the bedrock-agentcore SDK's own memory integration tests against cairn.

    python -m tests.sdk_integ SDIST_ROOT [--doc docs/agentcore-compatibility.md]

``SDIST_ROOT`` is the unpacked sdist of the pinned SDK (the make target downloads it; its code
is never committed). The run starts ``cairn serve`` on a fresh store, makes the pre-populated
memory the SDK's TESTING.md prescribes, runs ``tests_integ/memory`` with the echo model in
place of Bedrock (``tests.sdk_integ.echo_model``), stops the server and writes the pass count
and every test that did not pass, with its reason, into the compatibility document. It exits
non-zero when a test fails for a reason not in ``report.KNOWN_GAPS``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from tests.sdk_integ.prepopulate import prepopulate
from tests.sdk_integ.report import read_junit, render, stale_gaps, unexplained, write_section
from tests.sdk_integ.server import REGION, REPO, cairn_serve, client_env


def _extraction_note(seconds: float | None, records: dict[str, list[str]]) -> str:
    filed = sum(len(v) for v in records.values())
    if seconds is None:
        return (
            f"Offline extraction (the rules of docs/extraction.md) of TESTING.md's "
            f"four-message conversation left a namespace empty ({filed} records filed in all)."
        )
    return (
        f"Offline extraction (the rules of docs/extraction.md) filed {filed} records from "
        f"TESTING.md's four-message conversation in its three namespaces within "
        f"{seconds:.0f} s."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.sdk_integ")
    parser.add_argument("sdist_root", type=Path)
    parser.add_argument("--doc", type=Path, default=REPO / "docs" / "agentcore-compatibility.md")
    args = parser.parse_args(argv)
    tests = args.sdist_root / "tests_integ" / "memory"
    if not tests.is_dir():
        parser.error(f"{tests} does not exist: give the unpacked bedrock-agentcore sdist")
    with tempfile.TemporaryDirectory(prefix="cairn-sdk-integ-") as tmp:
        work = Path(tmp)
        with cairn_serve(work) as url:
            os.environ.update(client_env(url, work, prepopulated_id=""))
            filled = prepopulate(REGION)
            env = client_env(url, work, prepopulated_id=filled.memory_id)
            junit = work / "junit.xml"
            subprocess.run(  # noqa: S603  # our own interpreter and pytest, no shell
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-p",
                    "tests.sdk_integ.echo_model",
                    "-p",
                    "no:cacheprovider",
                    "-q",
                    "-rfEs",
                    f"--junitxml={junit}",
                    f"--rootdir={args.sdist_root.resolve()}",
                    str(tests.resolve()),
                ],
                # Not the sdist's root: its own `tests` package would shadow this one.
                cwd=work,
                env=env,
                check=False,
            )
        outcomes = read_junit(junit)
    section = render(
        outcomes,
        sdk_version=version("bedrock-agentcore"),
        extraction_note=_extraction_note(filled.seconds_to_extract, filled.records),
    )
    write_section(args.doc, section)
    print(section)
    for test_id in stale_gaps(outcomes):
        print(f"note: {test_id} passes now; remove it from KNOWN_GAPS", file=sys.stderr)
    failures = unexplained(outcomes)
    for outcome in failures:
        print(f"unexplained: {outcome.test_id}: {outcome.message}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
