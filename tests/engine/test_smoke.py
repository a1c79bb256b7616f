from boulanger.engine import Game


def test_deal_one_matches_the_rules() -> None:
    game = Game("BK1-C4-AAAAAAB")
    assert [str(c) for c in game.board.columns[0]] == ["JD", "KD", "2S", "4C", "3S", "6D", "6S"]
