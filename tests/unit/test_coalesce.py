"""The text-delta coalescer (pseudoclaude.api.coalesce): order kept, nothing lost, the same
shape, the throttle's timing."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pseudoclaude.api.coalesce import TextCoalescer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def text(delta: str, workspace: str = "file:///a", session: str = "s1") -> dict[str, Any]:
    return {"workspace": workspace, "sessionId": session, "kind": "text", "delta": delta}


def test_text_after_a_quiet_window_is_due_at_once() -> None:
    clock = Clock()
    held = TextCoalescer(window=0.016, clock=clock)
    assert not held.pending and held.take() == []
    assert held.add(text("Hel")) == 0  # nothing sent yet: no delay for a slow stream
    assert held.pending
    assert held.take() == [text("Hel")]
    assert not held.pending
    clock.now += 0.020  # a window later: due at once again
    assert held.add(text("lo")) == 0


def test_text_within_the_window_waits_and_is_merged_in_order() -> None:
    clock = Clock()
    held = TextCoalescer(window=0.016, clock=clock)
    held.add(text("a"))
    held.take()
    clock.now += 0.004
    assert abs(held.add(text("b")) - 0.012) < 1e-9  # due at the end of the window
    clock.now += 0.005
    assert abs(held.add(text("c")) - 0.007) < 1e-9
    clock.now += 0.010
    assert held.add(text("d")) == 0  # the window is over
    assert held.take() == [text("bcd")]  # one event, the same shape, the deltas in order


def test_a_single_delta_keeps_its_params() -> None:
    held = TextCoalescer(clock=Clock())
    params = text("only", session="s9")
    held.add(params)
    assert held.take() == [params]


def test_streams_are_merged_separately_in_the_order_they_started() -> None:
    clock = Clock()
    held = TextCoalescer(clock=clock)
    held.add(text("x"))
    held.take()
    for params in (text("b1", "file:///b"), text("a1"), text("b2", "file:///b"),
                   text("a2"), text("n1", session="s2")):
        held.add(params)
    assert held.take() == [text("b1b2", "file:///b"), text("a1a2"), text("n1", session="s2")]


def test_taking_nothing_does_not_restart_the_window() -> None:
    clock = Clock()
    held = TextCoalescer(window=0.016, clock=clock)
    held.add(text("a"))
    held.take()
    clock.now += 0.020
    assert held.take() == []  # e.g. a response sent with no text held
    assert held.add(text("b")) == 0


# (stream, delta) added; "take" flushes; "tick" lets time pass
Step = tuple[str, str] | str
steps = st.lists(st.one_of(
    st.tuples(st.sampled_from(["file:///a", "file:///b", "file:///c"]),
              st.text(max_size=4)),
    st.just("take"), st.just("tick")), max_size=60)


@given(steps)
def test_nothing_is_lost_or_reordered(script: list[Step]) -> None:
    clock = Clock()
    held = TextCoalescer(window=0.016, clock=clock)
    sent: list[dict[str, Any]] = []
    added: dict[str, str] = {}
    for step in [*script, "take"]:
        if step == "take":
            sent.extend(held.take())
        elif step == "tick":
            clock.now += 0.007
        else:
            workspace, delta = step
            added[workspace] = added.get(workspace, "") + delta
            due = held.add(text(delta, workspace))
            assert 0 <= due <= 0.016 + 1e-9
    assert not held.pending
    got: dict[str, str] = {}
    for params in sent:
        assert set(params) == {"workspace", "sessionId", "kind", "delta"}
        assert params["kind"] == "text" and params["sessionId"] == "s1"
        got[params["workspace"]] = got.get(params["workspace"], "") + params["delta"]
    assert got == added  # every stream, every character, in order
