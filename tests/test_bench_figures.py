"""How benchmark 5 times a prompt (``bench.figures``): from the press that made it the person's turn."""

from bench.crowd import PressRecord, PromptSample, Seen
from bench.figures import SHOWHAND_TURN, Figures, Span
from bench.people import TableSpec
from faketg.world import World

SHOWHAND = TableSpec("showhand", -5_000_000, (1, 2, 3))


def press(person: int, action: str, handed: float) -> PressRecord:
    return PressRecord(0, person, action, 1, "dm", f"q{handed}", int(handed * 10), handed - 0.01, handed)


def showhand_wait(presses: list[PressRecord], person: int, visible: float) -> list[float]:
    seen = Seen(presses=presses, prompts=[PromptSample(0, person, 1, "move", visible, "dm")])
    by_kind, unmeasured = Figures(World(), seen, [SHOWHAND], 100.0).prompts_by_kind(Span(0.0, 100.0))
    assert unmeasured == 0
    return [round(value, 3) for value in by_kind[SHOWHAND_TURN].values]


def test_a_showhand_turn_starts_at_the_previous_players_action():
    assert showhand_wait([press(1, "bet", 1.0), press(2, "call", 4.0)], 3, 4.5) == [0.5]


def test_a_showhand_turn_after_ones_own_call_closed_the_betting_starts_at_that_call():
    """Person 1 called last, closing card 2's betting; card 3 shows them first to speak: their turn
    began with their own call (not 2's raise before it, which would count their thinking time)."""
    presses = [press(2, "raise", 1.0), press(3, "call", 2.0), press(1, "call", 6.0)]
    assert showhand_wait(presses, 1, 6.3) == [0.3]
