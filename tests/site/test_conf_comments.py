"""The site files under conf/ name the policies the registry has, no more and no fewer."""

from __future__ import annotations

import re

from batchd.sched.registry import policy_names
from paths import ROOT

CONF = ROOT / "conf"
# "... one of: NAME, NAME, ... NAME (docs/...)" in a comment, over several lines.
LISTED = re.compile(r"one of:(?P<names>[^(]*)\(docs/scheduling\.md\)")


def comments(text: str) -> str:
    """The file's comment text, its lines joined without their '#'."""
    return " ".join(
        line.strip().removeprefix("#").strip()
        for line in text.splitlines()
        if line.strip().startswith("#")
    )


def test_the_policy_lists_in_conf_comments_match_the_registry() -> None:
    lists = {}
    for path in sorted(CONF.glob("*.toml")):
        for match in LISTED.finditer(comments(path.read_text())):
            names = [n.strip() for n in match["names"].split(",")]
            lists[path.name] = names
    assert "hpcline96.toml" in lists  # the annotated example site file lists them all
    for name, listed in lists.items():
        assert sorted(listed) == sorted(policy_names()), name


def test_every_policy_a_conf_file_sets_is_registered() -> None:
    known = set(policy_names())
    for path in sorted(CONF.glob("*.toml")):
        for value in re.findall(r'^\s*policy = "([^"]+)"', path.read_text(), re.M):
            assert value in known, f"{path.name}: policy = {value!r}"
