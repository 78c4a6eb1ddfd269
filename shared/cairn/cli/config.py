"""``cairn.toml``: defaults for the ``cairn`` command, below flags and environment variables.

The file is ``<user config dir>/cairn.toml`` (``~/.config/cairn/cairn.toml`` on Linux), or
the path in ``CAIRN_CONFIG``. Every key is optional::

    actor = "tg:12345"          # as --actor / CAIRN_ACTOR
    memory = "default"          # as --memory / CAIRN_MEMORY
    store = "~/cairn/cairn.db"  # as --store / CAIRN_STORE ("~" is expanded)
    provider = "openai"         # as --provider / CAIRN_PROVIDER (cairn.cli.providers)
    model = "llama3.2"          # as --model / CAIRN_MODEL
    base_url = "http://127.0.0.1:11434/v1"  # as --base-url / CAIRN_BASE_URL

A value given on the command line wins over the environment, which wins over the file. A file
that is not valid TOML, or names a key cairn does not know, is an error that names the file and
what to fix; a missing file is no error (``CAIRN_CONFIG`` naming a missing file is).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from cairn.cli.errors import UsageError

CONFIG_ENV = "CAIRN_CONFIG"
KEYS = ("actor", "memory", "store", "provider", "model", "base_url")


@dataclass(frozen=True)
class CliConfig:
    """What ``cairn.toml`` sets; ``None`` where it is silent."""

    actor: str | None = None
    memory: str | None = None
    store: Path | None = None
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    path: Path | None = None


def default_config_path() -> Path:
    """``<user config dir>/cairn.toml``, e.g. ``~/.config/cairn/cairn.toml`` on Linux."""
    return Path(platformdirs.user_config_dir("cairn")) / "cairn.toml"


def load_config(environ: Mapping[str, str]) -> CliConfig:
    """The configuration file's settings (none if there is no file); ``UsageError`` if the
    file is unreadable, not TOML, or names an unknown key or a value of the wrong type."""
    named = environ.get(CONFIG_ENV)
    path = Path(named).expanduser() if named else default_config_path()
    if not path.exists():
        if named:
            raise UsageError(f"{CONFIG_ENV} names {path}, which does not exist; fix or unset it")
        return CliConfig()
    try:
        settings = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the configuration file {path} ({exc}); fix it") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"the configuration file {path} is not valid TOML ({exc}); fix it"
        ) from exc
    unknown = sorted(set(settings) - set(KEYS))
    if unknown:
        raise UsageError(
            f"the configuration file {path} sets {', '.join(unknown)}, which cairn does not "
            f"know; the keys are {', '.join(KEYS)}"
        )
    wrong = [key for key, value in settings.items() if not isinstance(value, str) or not value]
    if wrong:
        raise UsageError(
            f"in the configuration file {path}, {', '.join(sorted(wrong))} must be a non-empty "
            'string, e.g. actor = "tg:12345"'
        )
    store = settings.get("store")
    return CliConfig(
        actor=settings.get("actor"),
        memory=settings.get("memory"),
        store=Path(store).expanduser() if store else None,
        provider=settings.get("provider"),
        model=settings.get("model"),
        base_url=settings.get("base_url"),
        path=path,
    )
