"""What only the filesystem staging store promises: durability on disk, private files, and
crash leftovers that never surface as payloads."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cairn.errors import ConfigurationError, RolloutNotFoundError
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.models import Scope
from cairn.rollout.staging_keys import scope_prefix, staging_key

SCOPE = Scope(memory_id="m1", actor_id="tg:12345")


def test_a_staged_payload_survives_reopening_the_directory(tmp_path: Path) -> None:
    FilesystemStagingStore(tmp_path).put(SCOPE, "ro-1", b"evidence")

    assert FilesystemStagingStore(tmp_path).get(SCOPE, "ro-1") == b"evidence"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_staged_files_and_their_directories_are_private_to_the_user(tmp_path: Path) -> None:
    store = FilesystemStagingStore(tmp_path / "staging")

    key = store.put(SCOPE, "ro-1", b"evidence")

    path = tmp_path / "staging" / key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "staging").stat().st_mode) == 0o700


def test_a_half_written_temp_file_from_a_crash_is_never_read_as_a_payload(
    tmp_path: Path,
) -> None:
    store = FilesystemStagingStore(tmp_path)
    store.put(SCOPE, "ro-0", b"other")
    leftover = tmp_path / scope_prefix(SCOPE) / ".ro-1.0123456789abcdef.tmp"
    leftover.write_bytes(b'{"events": [')

    with pytest.raises(RolloutNotFoundError):
        store.get(SCOPE, "ro-1")
    store.put(SCOPE, "ro-1", b"complete")

    assert store.get(SCOPE, "ro-1") == b"complete"
    assert store.erase_scope(SCOPE) == 2
    assert not leftover.exists()


def test_a_put_leaves_no_temp_files_behind(tmp_path: Path) -> None:
    store = FilesystemStagingStore(tmp_path)

    store.put(SCOPE, "ro-1", b"one")
    store.put(SCOPE, "ro-1", b"one")

    directory = tmp_path / scope_prefix(SCOPE)
    assert sorted(p.name for p in directory.iterdir()) == ["ro-1"]
    assert (tmp_path / staging_key(SCOPE, "ro-1")).read_bytes() == b"one"


def test_a_staging_root_that_is_a_file_is_a_configuration_error(tmp_path: Path) -> None:
    not_a_directory = tmp_path / "staging"
    not_a_directory.write_text("oops")

    with pytest.raises(ConfigurationError, match="staging directory"):
        FilesystemStagingStore(not_a_directory).put(SCOPE, "ro-1", b"evidence")
