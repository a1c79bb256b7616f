"""Display names: one set of rules for race joins and daily attempts.

A name is normalised (NFKC, runs of white space made one space) and must
then have 1 to :data:`NAME_MAX` characters, none of them a control, format
or otherwise invisible character (``bad_name``). Two names of one race may
not look alike (``name_taken``): they are compared by keys built on the
confusable *skeleton* of Unicode Technical Standard #39, so "Аnn" (Cyrillic
А), "Ａnn" (fullwidth) and "Ann" are one name. The keys also ignore case and
combining marks, so "Ánn" and "A\u0336nn" are taken by "Ann" too: in a race
of eight players a refused look-alike costs little, a convincing impostor a
lot. Two keys, because case and look-alikes do not commute: :func:`name_key`
folds case first ("PHILIBERT" is "Philibert": the table maps a capital I to
the l it looks like, which folding first keeps from splitting one name in
two), :func:`shape_key` maps look-alikes first ("ВОВ" in Cyrillic capitals is
"BOB", although "вов" looks like nothing Latin). Two names are one when
either key is the same (:func:`look_alike`).

The skeleton uses the prototypes of UTS #39's confusables.txt, kept as
the package's data (:mod:`.confusables`): no Python package offers the
skeleton itself from maintained data.
"""

from __future__ import annotations

import unicodedata

from .confusables import prototypes
from .errors import Refused
from .protocol import NAME_MAX

# Printable by Python's measure, yet shown as nothing (or as a blank): fillers,
# joiners and selectors that would let two different names look the same.
_INVISIBLE = frozenset(
    [
        0x034F,  # combining grapheme joiner
        0x115F, 0x1160, 0x3164, 0xFFA0,  # Hangul fillers
        0x17B4, 0x17B5,  # Khmer inherent vowels
        0x180B, 0x180C, 0x180D, 0x180E, 0x180F,  # Mongolian selectors and separator
        0x2800,  # braille pattern blank
        *range(0xFE00, 0xFE10),  # variation selectors
        *range(0xE0100, 0xE01F0),  # variation selectors supplement
    ]
)  # fmt: skip
# More combining marks than this on one character is "zalgo" text.
_MARKS_MAX = 2


def clean_name(raw: object) -> str:
    """The name as it is stored and shown; :class:`Refused` ``bad_name`` otherwise."""
    refusal = Refused(
        "bad_name", f"a name has 1 to {NAME_MAX} visible characters, and no control characters"
    )
    if not isinstance(raw, str):
        raise refusal
    try:
        name = " ".join(unicodedata.normalize("NFKC", raw).split())
    except UnicodeError:
        raise refusal from None
    if not 1 <= len(name) <= NAME_MAX or not name.isprintable():
        raise refusal
    if unicodedata.combining(name[0]):
        raise refusal  # a mark on nothing, or on the text before the name
    marks = 0
    for char in name:
        if ord(char) in _INVISIBLE:
            raise refusal
        marks = marks + 1 if unicodedata.combining(char) else 0
        if marks > _MARKS_MAX:
            raise refusal
    return name


def _skeleton(text: str) -> str:
    """UTS #39 skeleton: NFD, each character replaced by its prototype, NFD again."""
    table = prototypes()
    mapped = "".join(table.get(c, c) for c in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


def _visible(key: str) -> str:
    return "".join(c for c in key if not unicodedata.combining(c) and ord(c) not in _INVISIBLE)


def name_key(name: str) -> str:
    """A name's key with case folded *before* look-alikes are mapped: "PHILIBERT",
    "Philibert" and "philibert" have one key (a capital I is an i here, not the l
    it looks like). Accounts are found by it."""
    return _visible(_skeleton(_skeleton(name.casefold()).casefold()))


def shape_key(name: str) -> str:
    """A name's key with look-alikes mapped before case is folded: it catches capitals
    whose lower case looks like nothing else ("ВОВ" in Cyrillic, "BOB"; "BiII", "Bill")."""
    return _visible(_skeleton(_skeleton(name).casefold()))


def name_keys(name: str) -> tuple[str, str]:
    """Both keys of a name (:func:`name_key`, :func:`shape_key`)."""
    return name_key(name), shape_key(name)


def look_alike(a: str, b: str) -> bool:
    """Whether two names are one name: the same key of either kind."""
    return name_key(a) == name_key(b) or shape_key(a) == shape_key(b)
