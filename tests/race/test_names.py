"""Display names: normalised, visible, and compared by their confusable skeleton."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from boulanger.race.confusables import Confusables, confusables
from boulanger.race.errors import Refused
from boulanger.race.names import clean_name, look_alike, name_key, shape_key


@pytest.mark.parametrize(
    "look_alike",
    [
        "Ann",
        "ann",
        "ANN",
        "\u0410nn",  # Cyrillic capital A
        "\u0430nn",  # Cyrillic small a
        "\uff21nn",  # fullwidth A
        "\U0001d400nn",  # mathematical bold A
        "\u24b6nn",  # circled A
        "Ann\u0301",  # combining acute
        "A\u0301nn",
        "A\u0336nn",  # combining long stroke overlay
        " Ann  ",
    ],
)
def test_look_alikes_share_a_key(look_alike: str) -> None:
    assert name_key(clean_name(look_alike)) == name_key("Ann")


def test_different_names_keep_different_keys() -> None:
    keys = {name_key(clean_name(n)) for n in ["Ann", "Anne", "Bo", "Bob", "Jo", "Jon", "An n"]}
    assert len(keys) == 7
    assert look_alike("BiII", "Bill")  # capital I looks like l (the shape key)


def test_names_are_stored_in_nfkc_with_single_spaces() -> None:
    assert clean_name("\uff21nn") == "Ann"
    assert clean_name("  Ann \t  Lee ") == "Ann Lee"
    assert clean_name("Ann\u00a0Lee") == "Ann Lee"  # no-break space
    assert clean_name("Jose\u0301") == "Jos\u00e9"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        "x" * 25,
        "A\u200bnn",  # zero width space
        "Ann\u200d",  # zero width joiner
        "Ann\u202e",  # right-to-left override
        "\u3164",  # Hangul filler
        "Ann\u115f",
        "\u2800",  # braille blank
        "Ann\ufe0f",  # variation selector
        "A\x07nn",
        "\u0301Ann",  # a mark on nothing
        "a\u0301\u0302\u0303\u0304",  # zalgo
        "\ud800nn",  # a lone surrogate
        None,
        5,
    ],
)
def test_bad_names_are_refused(bad: object) -> None:
    with pytest.raises(Refused) as refused:
        clean_name(bad)
    assert refused.value.code == "bad_name"


# The table is UTS #39's confusables.txt of Unicode 13.0.0, while this interpreter's
# unicodedata (its NFKC and NFD) is 14.0.0: no package the project can install
# ships confusables.txt 14.0.0. The mismatch is listed here so that it is seen: a
# new interpreter, or a table made again from another version, fails the test
# below until the table's version is the interpreter's (then empty this).
KNOWN_VERSION_MISMATCH = {("13.0.0", "14.0.0")}


def test_the_confusables_table_is_of_the_interpreter_s_unicode_version() -> None:
    pair = (confusables().version, unicodedata.unidata_version)
    assert pair[0] == pair[1] or pair in KNOWN_VERSION_MISMATCH, (
        f"the confusables table is Unicode {pair[0]}, the interpreter's {pair[1]}:"
        " make the table again from confusables.txt of the interpreter's version"
    )


def test_the_confusables_data_file_reads_whole() -> None:
    table = confusables()
    assert len(table.prototypes) == 6311  # every line of the data file
    assert table.prototypes["\u0410"] == "A"  # Cyrillic capital A
    assert table.prototypes["\uff21"] == "A"  # fullwidth A
    with pytest.raises(ValueError, match="line 2"):
        Confusables.parse("# Version: 1.0.0\n0041 0042\n")
    with pytest.raises(ValueError, match="no Unicode version"):
        Confusables.parse("0041;0042\n")


# -- case folded before look-alikes are mapped ------------------------------------------

_TABLE = confusables().prototypes
# Every character the table speaks of, and ASCII letters and digits.
_CHARS = sorted(
    {*_TABLE, *(c for target in _TABLE.values() for c in target)}
    | {chr(c) for c in range(0x30, 0x7B) if chr(c).isalnum()}
)


def test_a_name_in_capitals_is_the_same_name() -> None:
    # The table maps a capital I to the l it looks like: folding case first keeps
    # "PHILIBERT" from becoming "PHLLLBERT", another name than "Philibert".
    assert name_key("PHILIBERT") == name_key("Philibert") == name_key("philibert")
    assert look_alike("PHILIBERT", "Philibert")
    # Capitals whose lower case looks like nothing else are caught by the shape key.
    assert look_alike("\u0412\u041e\u0412", "BOB")  # Cyrillic ВОВ
    assert not look_alike("Phillbert", "Philibert")


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from(_CHARS), min_size=1, max_size=8))
def test_the_name_key_ignores_case(text: str) -> None:
    try:
        name = clean_name(text)
    except Refused:
        assume(False)
        return
    for other in (name.upper(), name.lower(), name.casefold(), name.swapcase()):
        # Only where case changes nothing else ("ß" upper is "SS", "ŉ" is "ʼN": folded alike).
        assume(unicodedata.normalize("NFKC", other).casefold() == name.casefold())
        assert name_key(clean_name(other)) == name_key(name), (name, other)


def test_every_character_of_the_table_is_one_name_with_its_prototype() -> None:
    """Over the whole table: a source character and its prototype look alike, by one
    key or the other, between any letters and in capitals. The exceptions are the
    table's own entries whose source decomposes (NFD) into a base the keys keep and
    marks they drop ("ö" is listed as looking like "ة")."""
    missed = []
    for source, target in _TABLE.items():
        decomposes = unicodedata.normalize("NFD", source) != source
        for a, b in ((source, target), (f"x{source}y", f"x{target}y")):
            if not look_alike(a, b) and not decomposes:
                missed.append((a, b))
    assert missed == []
    # Both keys of a capital and its small letter agree, for every cased source.
    for source in _TABLE:
        if source.upper() != source and source.upper().casefold() == source.casefold():
            assert name_key(source.upper()) == name_key(source)


def test_the_shape_key_is_the_old_name_key() -> None:
    """Accounts made before case was folded first are kept under the shape key's digest:
    it must stay what the name key was (skeleton, fold, skeleton)."""
    assert shape_key("\u0410nn") == shape_key("Ann") == "ann"
    assert shape_key("PHILIBERT") == "phlllbert"
    assert shape_key("Ivan") == "lvan"
