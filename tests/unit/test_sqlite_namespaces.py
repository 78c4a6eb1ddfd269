"""The SQL namespace-prefix filter selects exactly what ``namespace_matches`` says, always."""

from __future__ import annotations

import itertools
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord
from cairn.models import Scope, Source, SourceKind, namespace_matches
from cairn.store.sqlite import SQLiteBackend

# Characters either side of "/" in byte order ("-" < "." < "/" < "0"), where a range-based
# prefix match would go wrong first, plus ordinary ones.
SEGMENT = st.text(alphabet="a0-_1", min_size=1, max_size=4).filter(lambda s: s[0] not in "-_")
NAMESPACE = st.builds(
    lambda lead, segments, trailing: lead + "/".join(segments) + ("/" if trailing else ""),
    st.sampled_from(["/", ""]),
    st.lists(SEGMENT, min_size=1, max_size=4),
    st.booleans(),
)


def test_namespace_prefix_listing_matches_the_segment_rule(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "cairn.db")
    records = backend.stores().records
    actors = itertools.count()

    @settings(max_examples=200, deadline=None)
    @given(
        namespaces=st.lists(NAMESPACE, min_size=1, max_size=12),
        prefix=st.one_of(NAMESPACE, st.sampled_from(["/", "/a", "/a/", "a", "a0"])),
    )
    def check(namespaces: list[str], prefix: str) -> None:
        scope = Scope(memory_id="m1", actor_id=f"actor-{next(actors)}")
        created = [
            NewRecord(namespace=ns, content="fact", sources=(Source(kind=SourceKind.USER),))
            for ns in namespaces
        ]
        records.apply(scope, [Create(record=r) for r in created])

        page = records.list_records(scope, namespace_prefix=prefix, limit=100)

        expected = sorted(r.record_id for r in created if namespace_matches(r.namespace, prefix))
        assert [v.record_id for v in page.items] == expected

    try:
        check()
    finally:
        backend.close()
