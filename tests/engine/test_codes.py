"""Game codes: BK1-C<cells>-<7 base-32 characters>, parse, format, refusals."""

from __future__ import annotations

import pytest

from boulanger.engine import GameCode, InvalidCodeError
from boulanger.engine.codes import ALPHABET, MAX_DEAL


def test_rules_example_is_deal_860_with_4_cells() -> None:
    code = GameCode.parse("BK1-C4-AAAAA24")
    assert (code.deal, code.cells) == (860, 4)
    assert str(code) == "BK1-C4-AAAAA24"
    assert code == GameCode(860, 4)


def test_alphabet_is_rfc_4648_base_32() -> None:
    assert ALPHABET == "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    # 860 = 26 * 32 + 28: "2" is 26, "4" is 28.
    assert 26 * 32 + 28 == 860


@pytest.mark.parametrize(
    ("deal", "text"),
    [
        (1, "AAAAAAB"),
        (31, "AAAAAA7"),
        (32, "AAAAABA"),
        (860, "AAAAA24"),
        (32000, "AAAA7IA"),
        (2**30, "BAAAAAA"),
        (MAX_DEAL, "B777777"),
    ],
)
@pytest.mark.parametrize("cells", [4, 2, 1])
def test_format_and_parse_round_trip(deal: int, text: str, cells: int) -> None:
    code = GameCode(deal, cells)
    assert str(code) == f"BK1-C{cells}-{text}"
    assert GameCode.parse(str(code)) == code
    assert repr(code) == f"GameCode.parse('BK1-C{cells}-{text}')"


def test_every_deal_in_a_range_round_trips() -> None:
    for deal in [*range(1, 2000), *range(MAX_DEAL - 2000, MAX_DEAL + 1)]:
        text = str(GameCode(deal))
        assert len(text) == 14
        assert GameCode.parse(text).deal == deal


@pytest.mark.parametrize(
    "text",
    [
        "bk1-c4-aaaaa24",
        "Bk1-C4-aAaAa24",
        "  BK1-C4-AAAAA24  ",
        "\tBK1-C4-AAAAA24\n",
        " bk1-c4-aaaaa24\r\n",
    ],
)
def test_lower_case_and_surrounding_blanks_are_accepted(text: str) -> None:
    code = GameCode.parse(text)
    assert code == GameCode(860, 4)
    assert str(code) == "BK1-C4-AAAAA24"  # canonical upper case


@pytest.mark.parametrize("cells", [4, 2, 1])
def test_cell_counts(cells: int) -> None:
    assert GameCode.parse(f"BK1-C{cells}-AAAAA24").cells == cells


def test_default_cell_count_is_4() -> None:
    assert GameCode(5).cells == 4


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # unknown prefix
        ("BK2-C4-AAAAA24", "unknown prefix 'BK2'"),
        ("XX1-C4-AAAAA24", "unknown prefix 'XX1'"),
        ("BK-C4-AAAAA24", "unknown prefix 'BK'"),
        ("-C4-AAAAA24", "unknown prefix ''"),
        # cell count other than 4/2/1
        ("BK1-C3-AAAAA24", "cell part 'C3'"),
        ("BK1-C0-AAAAA24", "cell part 'C0'"),
        ("BK1-C5-AAAAA24", "cell part 'C5'"),
        ("BK1-C8-AAAAA24", "cell part 'C8'"),
        ("BK1-C44-AAAAA24", "cell part 'C44'"),
        ("BK1-C04-AAAAA24", "cell part 'C04'"),
        ("BK1-4-AAAAA24", "cell part '4'"),
        ("BK1-X4-AAAAA24", "cell part 'X4'"),
        ("BK1--AAAAA24", "cell part ''"),
        # wrong length of the deal part
        ("BK1-C4-AAAA24", "6 deal characters"),
        ("BK1-C4-AAAAAA24", "8 deal characters"),
        ("BK1-C4-", "0 deal characters"),
        ("BK1-C4-B", "1 deal characters"),
        # a character outside the alphabet
        ("BK1-C4-AAAAA21", "'1'"),
        ("BK1-C4-AAAAA28", "'8'"),
        ("BK1-C4-AAAAA09", "'0'"),
        ("BK1-C4-AAAA_24", "'_'"),
        ("BK1-C4-AAA AA2", "' '"),
        ("BK1-C4-AAAAA2=", "'='"),
        # N = 0 and N out of range
        ("BK1-C4-AAAAAAA", "deal 0"),
        ("BK1-C4-CAAAAAA", f"deal {2**31}"),
        ("BK1-C4-7777777", f"deal {32**7 - 1}"),
        # shape
        ("BK1-C4", "expected BK1-C<cells>-<7 characters>"),
        ("BK1-C4-AAAAA24-X", "expected BK1-C<cells>-<7 characters>"),
        ("BK1C4AAAAA24", "expected BK1-C<cells>-<7 characters>"),
        ("", "expected BK1-C<cells>-<7 characters>"),
        ("   ", "expected BK1-C<cells>-<7 characters>"),
        ("BK1_C4_AAAAA24", "expected BK1-C<cells>-<7 characters>"),
        # blanks inside are not surrounding blanks
        ("BK1 -C4-AAAAA24", "unknown prefix 'BK1 '"),
        ("BK1-C4- AAAAA24", "8 deal characters"),
        # non-ASCII letters that str.upper() would map into the alphabet
        ("bk1-c4-aaaaaß", "'ß'"),
        ("BK1-C4-AAAAAıB", "'ı'"),
        ("ＢK1-C4-AAAAA24", "'Ｂ'"),
    ],
)
def test_bad_codes_are_refused_saying_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(InvalidCodeError) as info:
        GameCode.parse(text)
    message = str(info.value)
    assert reason in message
    assert repr(text) in message  # the message quotes the bad input


def test_max_deal_and_the_one_after() -> None:
    assert GameCode.parse("BK1-C4-B777777").deal == 2**31 - 1
    with pytest.raises(InvalidCodeError, match=r"valid deals are 1 \.\. 2147483647"):
        GameCode.parse("BK1-C4-CAAAAAA")


@pytest.mark.parametrize("value", [None, 860, b"BK1-C4-AAAAA24"])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(InvalidCodeError, match="must be a string"):
        GameCode.parse(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("deal", "cells", "reason"),
    [
        (0, 4, "deal number must be 1 .. 2147483647, not 0"),
        (-1, 4, "not -1"),
        (2**31, 4, f"not {2**31}"),
        (1, 3, "cell count must be 4, 2 or 1, not 3"),
        (1, 0, "not 0"),
    ],
)
def test_constructor_validates(deal: int, cells: int, reason: str) -> None:
    with pytest.raises(InvalidCodeError, match=reason):
        GameCode(deal, cells)


def test_codes_are_values() -> None:
    assert GameCode(860) == GameCode.parse("bk1-c4-aaaaa24")
    assert hash(GameCode(860)) == hash(GameCode.parse("BK1-C4-AAAAA24"))
    assert GameCode(860, 2) != GameCode(860, 4)
    with pytest.raises(AttributeError):
        GameCode(860).deal = 1  # type: ignore[misc]


def test_invalid_code_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        GameCode.parse("nope")
