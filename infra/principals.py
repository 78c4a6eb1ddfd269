"""The API's principals document on AWS: ``-c principalsFile=PATH`` (JSON or TOML).

Read and validated at synth time with ``cairn.api.principals`` (a bad document fails the synth,
saying what is wrong), then handed to the api function, compact JSON, as ``CAIRN_PRINCIPALS``
(``functions._common.wiring.principals``). Behind API Gateway the IAM authoriser names the
caller, so every principal is named by ``iam_arn`` (an exact caller ARN, or a prefix ending in
``*``: ``arn:aws:sts::123456789012:assumed-role/app/*``); a token entry is refused, since no
token reaches the function. The document is not secret (ARNs and actor ids); a Lambda
environment holds at most 4 KB, so it must stay under ``MAX_DOCUMENT_BYTES``. Changing it is a
deploy. Without it, every caller IAM lets in touches every actor (today's behaviour).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from cairn.api.principals import parse_principals
from cairn.errors import ConfigurationError

PRINCIPALS_ENV = "CAIRN_PRINCIPALS"
# Lambda allows 4 KB of environment for all variables; the stack's own take about 1 KB.
MAX_DOCUMENT_BYTES = 2800


class PrincipalsFileError(ValueError):
    """``-c principalsFile`` names a document the stack cannot use; the message says why."""


def principals_environment(path: str | None) -> dict[str, str]:
    """The api function's ``CAIRN_PRINCIPALS`` for the document at ``path`` (none: empty)."""
    if path is None:
        return {}
    file = Path(path)
    toml = file.suffix.lower() == ".toml"
    try:
        source = file.read_text(encoding="utf-8")
        principals = parse_principals(source, str(file), toml=toml)
    except OSError as exc:
        raise PrincipalsFileError(f"-c principalsFile: cannot read {file} ({exc})") from None
    except ConfigurationError as exc:
        raise PrincipalsFileError(f"-c principalsFile: {exc.message}") from None
    if principals.by_digest:
        raise PrincipalsFileError(
            f"-c principalsFile: {file} names principals by token_sha256; behind API Gateway "
            "no token reaches the function: name each caller by iam_arn"
        )
    data = tomllib.loads(source) if toml else json.loads(source)
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    if len(text.encode("utf-8")) > MAX_DOCUMENT_BYTES:
        raise PrincipalsFileError(
            f"-c principalsFile: {file} is {len(text)} bytes as compact JSON; a Lambda "
            f"environment holds about {MAX_DOCUMENT_BYTES} for it: use actor prefixes "
            "(tenant-1:*) and ARN prefixes to shorten it"
        )
    return {PRINCIPALS_ENV: text}
