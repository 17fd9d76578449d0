"""The per-move frames built without pydantic are byte for byte what their models send; parsing is one pass."""

from __future__ import annotations

import json
import random
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from websockets.frames import Frame, Opcode

from server import protocol as p
from server.engine import Game
from server.engine.variants import VARIANTS
from server.transport import text_frame


def _game_after(variant: str, seed: int, plies: int) -> Game:
    """A game some random legal moves in (random, not greedy: every kind of move shows up)."""
    rng = random.Random(seed)
    game = Game.new(str(seed), variant)
    for _ in range(plies):
        legal = game.legal_moves()
        if not legal:
            break
        game.play(rng.choice(legal))
    return game


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.integers(0, 10_000),
    plies=st.integers(0, 120),
    seq=st.integers(1, 500),
    ev=st.integers(1, 10_000),
    seat=st.sampled_from([0, 1]),
    finished=st.booleans(),
)
def test_frames_equal_their_models(
    variant: str, seed: int, plies: int, seq: int, ev: int, seat: int, finished: bool
) -> None:
    game = _game_after(variant, seed, plies)
    view = game.player_view()
    numbers = {
        "leftover": game.leftover,
        "on_grid": game.on_grid,
        "complete": game.complete,
        "moves": len(game.moves),
    }
    auto = [str(m) for m in game.moves[-2:]]
    move = auto[0] if auto else "T"
    model_view = p.View.model_validate(view)
    progress = p.Progress(ev=ev, seat=seat, finished=finished, **numbers)

    ack = p.Ack(seq=seq, ev=ev, move=move, auto=auto, view=model_view)
    assert p.ack_frame(seq, ev, move, auto, view) == p.encode(ack)
    assert p.progress_frame(ev, seat, numbers, finished) == p.encode(progress)
    board = p.Board(ev=ev, seat=seat, move=move, auto=auto, view=model_view, progress=progress)
    assert p.board_frame(ev, seat, move, auto, view, numbers, finished) == p.encode(board)

    # protocol v2: what the play revealed and the check, each left out when empty
    reveal, check = game.revealed(), game.check()
    ack_v2 = p.AckV2(seq=seq, ev=ev, reveal=reveal, auto=auto, check=check)
    fields = p.play_fields(reveal, auto, check)
    assert p.ack_v2_frame(seq, ev, fields) == p.encode(ack_v2)
    board_v2 = p.BoardV2(ev=ev, seat=seat, move=move, reveal=reveal, auto=auto, check=check)
    assert p.board_v2_frame(ev, seat, move, fields) == p.encode(board_v2)
    assert p.parse_server_v2(p.encode(ack_v2)) == ack_v2 and p.parse_server_v2(p.encode(board_v2)) == board_v2
    frame = json.loads(p.ack_v2_frame(seq, ev, fields))
    assert ("reveal" in frame) == bool(reveal) and ("auto" in frame) == bool(auto) and "view" not in frame


@pytest.mark.parametrize(
    "frame",
    [
        '{"type":"move","seq":3,"move":"W>A1"}',
        '{"type":"hello","v":1,"name":"Ann"}',
        '{"type":"create","variant":"open","seats":1}',
        '{"type":"watch","match":"ACDEFGHJ"}',
        '{"type":"resume","match":"ACDEFGHJ","token":"0123456789abcdef0123","last_ev":4}',
        '{"type": "ready"}',
    ],
)
def test_one_pass_parse_equals_the_two_step_parse(frame: str) -> None:
    assert p.parse_client(frame) == p._client.validate_python(json.loads(frame))


@pytest.mark.parametrize("sizes", [(0,), (5, 125), (126, 65535, 65536)])
def test_frames_made_once_are_the_bytes_websockets_writes(sizes: tuple[int, ...]) -> None:
    from websockets.protocol import State
    from websockets.server import ServerProtocol

    from server.transport import _Framing

    frames = tuple(b"x" * n for n in sizes)
    server = ServerProtocol()
    server.state = State.OPEN
    for f in frames:
        server.send_text(f)
    framing = _Framing()
    assert framing.wire(frames) == b"".join(server.data_to_send())
    assert framing.wire(frames) is framing.wire(frames)  # the same tuple: framed once


def test_a_frame_holds_no_more_memory_than_its_bytes() -> None:
    """A slow reader's outbox holds frames for a while: no working buffer may come with them."""
    game = _game_after("classic", 7, 40)
    view = game.player_view()
    numbers = {"leftover": game.leftover, "on_grid": game.on_grid, "complete": game.complete, "moves": 40}
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        frames = [p.ack_frame(n, n, "T", [], view) for n in range(50)]
        frames += [p.progress_frame(n, 0, numbers, False) for n in range(50)]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    payload = sum(len(f) for f in frames)
    assert held < payload + 100 * 100, (held, payload)  # each frame: its bytes and an object header


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65_535, 65_536, 100_000])
def test_a_text_frame_is_what_websockets_would_write(size: int) -> None:
    payload = bytes(random.Random(size).getrandbits(7) for _ in range(size))
    assert text_frame(payload) == Frame(Opcode.TEXT, payload).serialize(mask=False)
