"""``cairn serve`` as a user starts it wrong: each mistake is one line that says what to do."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

SERVE = [sys.executable, "-m", "cairn", "serve", "--embedder", "none"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*SERVE, *args], capture_output=True, text=True, timeout=60, env=_env(), check=False
    )


def test_a_port_out_of_range_is_a_usage_error_not_a_crash(tmp_path: Path) -> None:
    done = _serve("--port", "99999", "--store", str(tmp_path / "s.db"))
    assert done.returncode == 2
    assert done.stderr.startswith("cairn: error: argument --port: takes a port number from 0 to")
    assert "OverflowError" not in done.stderr
    assert not (tmp_path / "s.db").exists()


def test_a_port_in_use_says_so_and_how_to_pick_another(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve("--port", str(port), "--store", str(tmp_path / "s.db"))
    assert done.returncode == 1
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert "--port 0 picks a free one" in done.stderr
    assert "permissions" not in done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_every_interface_exports_a_url_this_machine_can_reach(tmp_path: Path) -> None:
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*SERVE, "--host", "0.0.0.0", "--port", "0", "--store", str(tmp_path / "s.db")],  # noqa: S104
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
    finally:
        process.send_signal(signal.SIGINT)
        _, notes = process.communicate(timeout=30)
    assert line.startswith("export AWS_ENDPOINT_URL_BEDROCK_AGENTCORE=http://127.0.0.1:")
    assert "0.0.0.0" not in line  # noqa: S104 - a string checked, nothing bound
    assert "Ctrl-C to stop" in notes
    assert "from another machine use http://<this machine's address>:" in notes
    assert process.returncode == 0, notes


def test_a_ctrl_c_while_cairn_is_still_loading_is_one_line(tmp_path: Path) -> None:
    # The interrupt arrives in the middle of importing cairn (here: the recall pipeline).
    program = (
        "import os, signal, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'cairn.recall.pipeline':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from cairn.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    store = tmp_path / "s.db"
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-c", program, "recall", "tea", "--actor", "a", "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        check=False,
    )
    assert (done.returncode, done.stderr) == (130, "cairn: error: interrupted\n")


def test_a_bad_principals_file_is_one_line_and_opens_no_store(tmp_path: Path) -> None:
    principals = tmp_path / "principals.toml"
    principals.write_text('[[principal]]\nname = "p"\ntoken = "plain"\nactors = ["a"]\n')
    done = _serve("--principals", str(principals), "--store", str(tmp_path / "s.db"))
    assert done.returncode == 1
    assert f"the principals document {principals} is not valid" in done.stderr
    assert "token_sha256" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "s.db").exists()


def test_principals_and_a_shared_token_together_are_refused(tmp_path: Path) -> None:
    principals = tmp_path / "principals.json"
    principals.write_text('{"principal": []}')
    done = _serve(
        *("--principals", str(principals), "--token", "t", "--store", str(tmp_path / "s.db"))
    )
    assert done.returncode == 1
    assert "give --principals or --token (CAIRN_TOKEN), not both" in done.stderr
    assert not (tmp_path / "s.db").exists()
