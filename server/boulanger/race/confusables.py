"""The confusable prototypes of Unicode Technical Standard #39, read from the package's data.

The table is ``boulanger/data/confusables.txt``, read as the catalog is (the
package's data, once, on first use): the first two fields of each line of
UTS #39's confusables.txt, a source code point and its prototype's code
points. Its ``# Version:`` line says which Unicode version it is from;
``tests/race/test_names.py`` holds it to the interpreter's
(``unicodedata.unidata_version``), whose NFKC and NFD the skeleton applies
around it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True, slots=True)
class Confusables:
    """The table: each confusable character's prototype, and the Unicode version."""

    version: str
    prototypes: dict[str, str]

    @classmethod
    def parse(cls, text: str) -> Confusables:
        """The data file's text; ``ValueError`` quoting the first line that is not a mapping."""
        version = ""
        table: dict[str, str] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            if line.startswith("# Version:"):
                version = line.removeprefix("# Version:").strip()
            if not line or line.startswith("#"):
                continue
            try:
                source, target = line.split(";")
                table[chr(int(source, 16))] = "".join(chr(int(c, 16)) for c in target.split())
            except ValueError:
                raise ValueError(f"confusables line {number}: {line!r}") from None
        if not version:
            raise ValueError("the confusables data names no Unicode version (# Version: ...)")
        return cls(version, table)


@functools.cache
def confusables() -> Confusables:
    """The package's table (read once, on first use)."""
    resource = resources.files("boulanger") / "data" / "confusables.txt"
    return Confusables.parse(resource.read_text(encoding="utf-8"))


def prototypes() -> dict[str, str]:
    """Each confusable character's prototype."""
    return confusables().prototypes
