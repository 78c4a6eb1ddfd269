"""How the README test reads a page: transcripts, programs with their output, and exemptions."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.markdown_blocks import blocks_of, fill_placeholders, shows

PAGE = """\
# A page

```console
$ export A=1
$ echo hello   # a comment
hello
$ printf 'one\\ntwo\\n'
...
two
```

```python
print("hi")
```

```text
hi
```

<!-- not run: it serves forever -->
```sh
serve
```

```yaml
a: b
```
"""


def test_a_page_splits_into_commands_programs_and_exemptions(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    console, program, exempt, other = blocks_of(page)
    assert [c.text for c in console.commands] == [
        "export A=1",
        "echo hello   # a comment",
        "printf 'one\\ntwo\\n'",
    ]
    assert [c.expected for c in console.commands] == ["", "hello", "...\ntwo"]
    assert console.commands[1].line == 5
    assert (program.language, program.body, program.expected) == ("python", 'print("hi")', "hi")
    assert exempt.not_run == "it serves forever"
    assert (other.language, other.not_run) == ("yaml", None)


def test_a_transcript_must_start_with_a_command(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```console\noutput first\n$ echo\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="starts with a `\\$ ` command"):
        blocks_of(page)


@pytest.mark.parametrize(
    ("expected", "actual", "same"),
    [
        ("a\nb", "a\nb\n\n", True),
        ("a ... c", "a bbb c", True),
        ("first\n...\nlast", "first\nx\ny\nlast", True),
        ("a\nb", "a\nc", False),
        ("a", "a\nmore", False),
        ("(x) [y]", "(x) [y]", True),
    ],
)
def test_output_matches_with_ellipses_only(expected: str, actual: str, same: bool) -> None:
    assert shows(expected, actual) is same


def test_placeholders_take_the_last_id_printed() -> None:
    printed = (
        "remembered mem-01a231212e75722dd2b5c073dcd8d06f3bf3 v1\n"
        "remembered mem-01a2312364066e879ca802c068e2cfd7375e v1\n"
        "journal: jrn-01a2312138aa30c25dc298bf\n"
    )
    assert fill_placeholders("cairn history mem-... # x", printed) == (
        "cairn history mem-01a2312364066e879ca802c068e2cfd7375e # x"
    )
    assert fill_placeholders("cairn replay jrn-...", printed).endswith(
        "jrn-01a2312138aa30c25dc298bf"
    )
    with pytest.raises(ValueError, match="no such id"):
        fill_placeholders("cairn history mem-...", "")
