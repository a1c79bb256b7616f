"""Reading docs/protocol.md: its sections and the JSON example of each message."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text()


def section(title: str) -> str:
    """The text of a ``## title`` section, up to the next one."""
    start = DOC.index(f"\n## {title}\n")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end > 0 else None]


def examples(text: str) -> dict[str, dict[str, Any]]:
    """Each ``### `type` `` heading with the first JSON block under it."""
    found = {}
    for match in re.finditer(r"### `([a-z_]+)`\n(.*?)(?=\n### |\Z)", text, re.S):
        block = re.search(r"```json\n(.*?)\n```", match.group(2), re.S)
        assert block, f"no example for {match.group(1)}"
        found[match.group(1)] = json.loads(block.group(1))
    return found
