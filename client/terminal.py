"""The terminal client: race or watch from a shell, the board in ANSI colour.

Moves are typed in RULES.md notation (``T``, ``W>B3``, ``A2:0>C5``,
``A2~B5``); Tab completes the legal ones (readline). Other commands:
``ready``, ``finish``, ``resign``, ``rematch``, ``help``, ``quit``; in
practice also ``hint`` and ``undo``. A practice game starts at once, on the
web page's clock (``p.MAX_TIME_LIMIT_S``).

At a terminal no command waits for the server: answers (acks, refusals,
the start, the result) show as they arrive, so typing never stalls. Piped
into stdin, a script's commands wait for their outcome instead (``ready``
for the start, a move for its ack, ``finish``/``resign`` for the result,
``rematch`` for the new match), so the script plays in order. At a terminal
``finish`` and ``resign`` ask to be typed twice, as the web page asks for a
second click; a script's lines are meant as typed. Rendering and completion
are plain functions (``render_board``, ``render_screen``, ``completions``)
that the tests call directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import queue
import sys
import termios
import textwrap
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from server import protocol as p
from server.engine.cards import BASE_RANKS

from .api import Client, ClientError, ConnectionLost, MoveRejected, connect, match_code

COMMANDS = ("ready", "finish", "resign", "rematch", "hint", "undo", "help", "quit")
HELP = (
    "moves: T  W>B3  A2:0>C5  A2~B5 (Tab completes) - ready finish resign rematch quit; practice: hint undo"
)
#: Shown while a race counts down to its start (never in practice, which starts at once).
GET_READY = "get ready: the race starts in a moment..."
#: How long a piped script's ``ready``/``finish`` waits for the start/the result.
SCRIPT_WAIT_S = 3600.0
RED_SUITS = "HD"
ROWS = "ABC"


class Style:
    """ANSI escapes, or nothing when colour is off."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *codes: int) -> str:
        if not self.color or not codes:
            return text
        return f"\x1b[{';'.join(map(str, codes))}m{text}\x1b[0m"


def card_cell(
    card: str, style: Style, *, top: bool = False, home: bool = False, complete: bool = False
) -> str:
    codes: list[int] = [31] if card[1] in RED_SUITS else []
    if top:
        codes.append(1)
    if complete:
        codes.append(42)
    elif home:
        codes.append(4)
    return style(card, *codes)


def render_board(view: p.View, style: Style, title: str = "") -> list[str]:
    """The grid as rows of overlapping piles (bottom card first), then waste and stock."""
    lines = [style(title, 1)] if title else []
    columns = sorted({int(name[1:]) for name in view.grid})
    lines.append("    " + "".join(f"{c:<5}" for c in columns))
    for r, row in enumerate(ROWS):
        piles = [view.grid.get(f"{row}{c}", []) for c in columns]
        depth = max([len(pile) for pile in piles] + [1])
        for k in range(depth):
            cells = []
            for pile in piles:
                if k >= len(pile):
                    cells.append("     " if pile or k else " --  ")
                    continue
                # RULES.md: home when the bottom card is the base rank of its row (a 5 in A is not;
                # a card still to come, ??, is no rank at all)
                home = pile[0][0] == BASE_RANKS[r]
                cells.append(
                    card_cell(
                        pile[k], style, top=k == len(pile) - 1, home=home, complete=home and len(pile) == 4
                    )
                    + "   "
                )
            lines.append((f" {row}  " if k == 0 else "    ") + "".join(cells).rstrip())
    wastes = []
    for i, w in enumerate(view.waste):
        name = "Waste" if len(view.waste) == 1 else f"W{i + 1}"
        top = card_cell(w.top, style, top=True) if w.top else "--"
        wastes.append(f"{name} {top} ({w.count})")
    lines.append("  ".join(wastes) + f"   Stock {view.stock_count}")
    if view.stock is not None:
        lines.append("Stock order: " + " ".join(view.stock))
    lines.append(f"Leftover {style(str(view.leftover), 1)}  on grid {view.on_grid}  complete {view.complete}")
    return lines


def counted(n: int, noun: str) -> str:
    """``n`` of an English noun that takes an s: "1 move", "2 moves", "0 moves"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def describe(exc: BaseException) -> str:
    """An error as a line of text, never an empty one (``str(TimeoutError())`` is empty)."""
    return str(exc) or type(exc).__name__


def clock_text(ends_at: int | None, now_ms: int) -> str:
    if not ends_at:
        return "--:--"
    left = max(0, ends_at - now_ms) // 1000
    return f"{left // 60:02d}:{left % 60:02d}"


@dataclass
class Screen:
    """Everything the terminal shows, updated from events."""

    match: str = ""
    seat: int | None = None
    lobby: p.Lobby | None = None
    view: p.View | None = None
    boards: dict[int, p.View] = field(default_factory=dict)  # spectators
    progress: dict[int, p.Progress] = field(default_factory=dict)
    ends_at: int | None = None
    starts_at: int | None = None
    result: p.Result | None = None
    note: str = ""
    stopped_at: int | None = None  # the clock stands still from then (result, lost connection)
    lost: str | None = None
    ended: set[int] = field(default_factory=set)  # seats whose game is over (the race may go on)
    sent: dict[int, str] = field(default_factory=dict)  # moves sent and not acknowledged yet, by seq
    practice: bool = False  # a practice game asked for: said from the first screen, before its lobby

    def clock(self, now: int) -> str:
        """The time left, frozen once the race is decided or the server is gone."""
        return clock_text(self.ends_at, now if self.stopped_at is None else min(now, self.stopped_at))

    def clock_running(self) -> bool:
        return self.ends_at is not None and self.stopped_at is None

    def connection_lost(self, reason: str, now: int) -> None:
        self.lost, self.note = reason, f"connection lost: {reason}"
        if self.stopped_at is None:
            self.stopped_at = now

    def update(self, msg: p.Message) -> None:
        if isinstance(msg, p.Seated):
            self.match, self.seat = msg.match, msg.seat
        elif isinstance(msg, p.Lobby):
            self.lobby, self.match = msg, msg.match
        elif isinstance(msg, p.Countdown):
            # "get ready" is drawn from the lobby's status (``render_screen``): a note would stay on
            # the screens after it, the board's first one included, until "go!" replaced it
            self.starts_at, self.note = msg.starts_at, ""
        elif isinstance(msg, p.Start):
            self.ends_at, self.note = msg.ends_at, "go!"
            if msg.view is not None:
                self.view = msg.view
            for n, board in enumerate(msg.boards or []):
                self.boards[n] = board
        elif isinstance(msg, p.Ack | p.AckV2):  # v2: the board is the client's own (``Terminal.on_event``)
            move = msg.move if isinstance(msg, p.Ack) else self.sent.pop(msg.seq, f"move {msg.seq}")
            if isinstance(msg, p.Ack):
                self.view = msg.view
            self.note = f"played {move}"
            if msg.auto:
                self.note += "; arranged home: " + " ".join(msg.auto)
        elif isinstance(msg, p.Undone):
            self.view, self.note = msg.view, "took back " + " ".join(msg.moves)
        elif isinstance(msg, p.Rejected | p.RejectedV2):
            self.note = f"{msg.code.value}: {msg.message}"
            self.view = msg.view or self.view
        elif isinstance(msg, p.Progress):
            self.progress[msg.seat] = msg
        elif isinstance(msg, p.Board):
            self.boards[msg.seat] = msg.view
            self.progress[msg.seat] = msg.progress
        elif isinstance(msg, p.Finished):
            self.ended.add(msg.seat)
            who = "you" if msg.seat == self.seat else _seat_name(self, msg.seat)  # not "seat 1"
            self.note = f"{who} finished: {msg.score} left ({msg.reason})"
        elif isinstance(msg, p.Result):
            self.decided(msg)
        elif isinstance(msg, p.Watching):
            self.match, self.lobby, self.ends_at = msg.match, msg.lobby, msg.ends_at
            for snap in msg.boards:
                self.progress[snap.seat] = snap.progress
                if snap.view is not None:
                    self.boards[snap.seat] = snap.view
            self.decided(msg.result)
        elif isinstance(msg, p.Resumed):
            self.match, self.seat, self.lobby = msg.match, msg.seat, msg.lobby
            self.view, self.ends_at = msg.view or self.view, msg.ends_at
            for prog in msg.opponents:
                self.progress[prog.seat] = prog
            self.decided(msg.result)
        elif isinstance(msg, p.Rematched):
            self.match, self.view, self.result, self.ends_at = msg.match, None, None, None
            self.stopped_at = None
            self.progress.clear()
            self.boards.clear()
            self.ended.clear()
            self.note = f"rematch: new match {msg.match}; type ready"
        elif isinstance(msg, p.Queued):
            self.note = (
                f"waiting for an opponent ({msg.variant}, {msg.time_limit_s // 60} min, you: {msg.rating})"
            )
            if msg.again:
                self.note = "your opponent was not ready; " + self.note
        elif isinstance(msg, p.Rated):
            self.note = "ratings: " + ", ".join(
                f"{_seat_name(self, s.seat)} {s.before} -> {s.after}{'?' if s.provisional else ''}"
                for s in msg.seats
            )
        elif isinstance(msg, p.Error):
            self.note = f"{msg.code.value}: {msg.message}"

    def playing(self) -> bool:
        """Whether this racer's own game is on: started, not over, not ended, not decided."""
        return (
            self.view is not None
            and not self.view.over
            and self.result is None
            and self.seat not in self.ended
            and self.lost is None
        )

    def decided(self, result: p.Result | None) -> None:
        """The result (if any): the clock stops at the moment the race was decided."""
        if result is None:
            return
        self.result = result
        if self.stopped_at is None:
            self.stopped_at = result.decided_at or p.now_ms()


def _seat_name(screen: Screen, seat: int) -> str:
    if screen.lobby:
        for s in screen.lobby.seats:
            if s.seat == seat:
                return s.name
    return f"seat {seat}"


def _away(screen: Screen, seat: int) -> bool:
    """A racer whose connection dropped during the race (their game goes on; the grace period runs)."""
    lobby = screen.lobby
    if lobby is None or lobby.status not in ("countdown", "playing"):
        return False
    return any(s.seat == seat and not s.connected for s in lobby.seats)


def progress_line(screen: Screen, seat: int, style: Style) -> str:
    prog = screen.progress.get(seat)
    name = _seat_name(screen, seat)
    away = style(" (away)", 31) if _away(screen, seat) else ""
    finished = seat in screen.ended or (prog is not None and prog.finished)  # ``finished`` says so first
    done = style(" finished", 32) if finished else away
    if prog is None:  # no move made yet (or none heard of): not "waiting" once its game is over
        return f"{name}:{done}" if finished else f"{name}: waiting{away}"
    return f"{name}: leftover {style(str(prog.leftover), 1)}, on grid {prog.on_grid}, complete {prog.complete}, moves {prog.moves}{done}"


def boards_lag(screen: Screen) -> bool:
    """Whether a spectator's boards may lag now: the lobby says so, and the race is on."""
    lobby = screen.lobby
    return lobby is not None and lobby.boards_lag and lobby.status == "playing" and screen.result is None


def render_result(result: p.Result, style: Style) -> list[str]:
    lines = [style("Result", 1)]
    for s in result.seats:
        mark = " *winner*" if result.winner == s.seat else ""
        grade = f", {s.rating}" if s.rating else ""  # the game's grade (RULES.md), not a player's rating
        lines.append(f"  {s.name}: {s.score} left ({s.reason}{grade}){mark}")
    if result.draw:
        lines.append("  a draw")
    winner = next((s for s in result.seats if s.seat == result.winner), None)
    if (
        len(result.seats) == 2
        and winner
        and all(s.score == winner.score and s.reason != "resign" for s in result.seats)
    ):
        lines.append(f"  the same leftover: {winner.name}'s game ended first")
    lines.append(f"  deal seed {result.seed}")
    return lines


def practising(screen: Screen) -> bool:
    """A practice game: one seat and no ranked daily attempt (or one asked for, before its lobby
    says so). Nobody to race or wait for: it starts at once, without a countdown (docs/protocol.md,
    ``ready``)."""
    lobby = screen.lobby
    return screen.practice or (lobby is not None and lobby.solo and not lobby.ranked)


def header_line(screen: Screen, style: Style, now: int) -> str:
    """The first line: what is played, match, status and clock (the clock ticker redraws just this line).

    Practice says so, and "starting" for the lobby and countdown it passes through at once: the
    race's words, "[countdown]" twice over the first screens, made it look like one.
    """
    status: str = "connection lost" if screen.lost else screen.lobby.status if screen.lobby else "connecting"
    alone = practising(screen)
    if alone and status in ("lobby", "countdown"):
        status = "starting"
    return (
        style(f"Devil's Grip {'practice' if alone else 'race'}  match {screen.match or '-'}", 1)
        + f"  [{status}]  clock {screen.clock(now)}"
    )


def opponents(screen: Screen) -> list[int]:
    """The other seats: those in the lobby (before their first move too) and those heard from."""
    seats = (
        set(screen.progress) | {s.seat for s in screen.lobby.seats} if screen.lobby else set(screen.progress)
    )
    return sorted(seat for seat in seats if seat != screen.seat)


def wrapped(text: str, width: int | None) -> list[str]:
    """``text`` as lines of at most ``width`` columns, broken between words only (None: one line)."""
    if width is None:
        return [text]
    return textwrap.wrap(
        text, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    ) or [""]


def render_screen(screen: Screen, style: Style, now_ms: int | None = None, width: int | None = None) -> str:
    """The whole screen as text (no cursor movement): header, boards, progress, notes.

    ``width``: the terminal's columns; the legal moves and the note are broken
    between words to fit (a move is never cut in two).
    """
    now = p.now_ms() if now_ms is None else now_ms
    status = screen.lobby.status if screen.lobby else "connecting"
    lines = [header_line(screen, style, now)]
    if screen.lobby and status == "lobby" and not practising(screen):  # nobody to wait for in practice
        for s in screen.lobby.seats:
            lines.append(
                f"  {s.name}: {'ready' if s.ready else 'not ready'}{'' if s.connected else ' (away)'}"
            )
    if status == "countdown" and not practising(screen):
        lines.append(style(GET_READY, 33))  # practice has no countdown: it starts at once
    if screen.seat is not None:
        if screen.view is not None:
            lines += render_board(screen.view, style)
        for seat in opponents(screen):
            lines.append("Opponent " + progress_line(screen, seat, style))
        if screen.playing():
            assert screen.view is not None
            legal = sorted(screen.view.legal, key=lambda m: "~" in m)  # swaps last: they never score
            shown = " ".join(legal[:16]) + (" ..." if len(legal) > 16 else "")
            lines += wrapped(f"Legal ({len(legal)}): {shown}", width)
    else:
        for seat in sorted(screen.boards):
            board, prog = screen.boards[seat], screen.progress.get(seat)
            title = progress_line(screen, seat, style)
            if prog is not None and board.moves < prog.moves:  # held back: the numbers are live
                title += f"; the board below shows {board.moves} of {counted(prog.moves, 'move')}"
            lines += render_board(board, style, title)
            lines.append("")
        if boards_lag(screen):
            lines.append("Boards shown as far as both racers have drawn (the counts are live).")
    if screen.result is not None:
        lines += render_result(screen.result, style)
    if screen.note:
        lines += [style(line, 33) for line in wrapped(screen.note, width)]
    return "\n".join(lines)


def completions(prefix: str, legal: list[str]) -> list[str]:
    """Legal moves and commands starting with ``prefix`` (moves compared upper-case)."""
    up = prefix.upper()
    out = [m for m in legal if m.startswith(up)]
    out += [c for c in COMMANDS if c.startswith(prefix.lower())]
    return out


def normalize(line: str) -> str:
    """A typed move in canonical case: ``w>b3`` is ``W>B3``; commands stay lower-case."""
    text = line.strip()
    return text.lower() if text.lower() in COMMANDS else text.upper()


def columns(out: TextIO) -> int | None:
    """The width of the terminal ``out`` writes to (None: not a terminal, or one that gives no width)."""
    try:
        return (os.get_terminal_size(out.fileno()).columns or None) if out.isatty() else None
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


class Terminal:
    """Drives one ``Client`` from lines of input, redrawing ``Screen`` on every event."""

    def __init__(self, client: Client, out: TextIO, *, interactive: bool, color: bool) -> None:
        self.client = client
        self.out = out
        self.interactive = interactive
        self.style = Style(color)
        self.screen = Screen()
        self.started = asyncio.Event()
        self.decided = asyncio.Event()
        self.rematched = asyncio.Event()
        self._asking: set[asyncio.Task[None]] = set()  # hints being thought of, at a terminal
        #: Set while the stdin thread shows its prompt and reads a line: a redraw meanwhile wipes
        #: the prompt, so it draws it again; at other times the next read shows it.
        self.prompting = threading.Event()
        self.armed: str | None = None  # "finish" or "resign" typed once at a terminal: type it again
        self.result_written: p.Result | None = None  # piped: the result the transcript has written

    def redraw(self) -> None:
        if self.interactive:
            text = render_screen(self.screen, self.style, width=columns(self.out))
            prompt = ""
            if self.prompting.is_set():
                prompt = "> "
                with contextlib.suppress(ImportError):
                    import readline

                    prompt += readline.get_line_buffer()
            self.out.write("\x1b[H\x1b[2J" + text + "\n" + prompt)
        else:
            self.transcribe()
        self.out.flush()

    def transcribe(self) -> None:
        """Piped: each screen is written below the last, a transcript; what it said stays said.

        A note is said once: the next screen is about what comes next. So is the result: once
        it is written the boards stand still, and each event after it (the other seats' news, a
        rating, the answer to the script's own ``finish``) wrote the whole screen again, the
        result 3 or 4 times over; after it, only a note is written.
        """
        screen = self.screen
        if screen.result is None or screen.result is not self.result_written:
            self.out.write(render_screen(screen, self.style) + "\n")
            self.result_written = screen.result
        elif screen.note:
            self.out.write(self.style(screen.note, 33) + "\n")
        screen.note = ""

    async def pump(self) -> None:
        """Read events into the screen until the connection ends; say so if it was lost."""
        try:
            async for msg in self.client.events():
                self.on_event(msg)
        except ConnectionLost as exc:
            self.screen.connection_lost(describe(exc), p.now_ms())
            for event in (self.started, self.decided, self.rematched):
                event.set()  # a script waiting for one goes on, to fail on its next line
            self.redraw()

    def on_event(self, msg: p.Message) -> None:
        self.screen.update(msg)
        # paired again after a no-show (``race_anyone`` returned the first, and readied it)
        if isinstance(msg, p.Seated) and msg.type == "paired":
            self._asking_task(self.client.ready())
        self.take_boards()
        if isinstance(msg, p.Start):
            self.started.set()
        if isinstance(msg, p.Result) or getattr(msg, "result", None) is not None:
            self.decided.set()
        if isinstance(msg, p.Rematched):
            self.started.clear()
            self.decided.clear()
            self.rematched.set()
        if self.interactive or not isinstance(msg, p.Lobby | p.Progress | p.Countdown):
            self.redraw()

    def _asking_task(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    def take_boards(self) -> None:
        """The boards as the client holds them: in protocol v2 no message carries one (its moves do)."""
        c = self.client
        if c.watching:
            for seat in c.session.boards:
                if (board := c.board(seat)) is not None:
                    self.screen.boards[seat] = board
        elif (view := c.view) is not None:
            self.screen.view = view

    async def tick_clock(self) -> None:
        """Redraw the header line (with the clock) each second while the race runs."""
        while True:
            await asyncio.sleep(1)
            if self.screen.clock_running():
                header = header_line(self.screen, self.style, p.now_ms())
                self.out.write(f"\x1b7\x1b[1;1H\x1b[2K{header}\x1b8")
                self.out.flush()

    async def run_commands(self, lines: AsyncIterator[str]) -> None:
        """Run typed lines until ``quit`` or their end."""
        async for line in lines:
            if not await self.command(line):
                return

    async def command(self, line: str) -> bool:
        """Run one typed line; False to quit."""
        text = normalize(line)
        if not text:
            return True
        if text == "quit":
            return False
        if self.client.watching and text != "help":
            self.screen.note = f"{text}: a spectator can only quit"
            self.redraw()
            return True
        armed, self.armed = self.armed, None
        if self.interactive and text in ("finish", "resign") and armed != text and self.screen.playing():
            self.armed = text
            self.screen.note = f"really {text}? type {text} again to confirm (anything else plays on)"
            self.redraw()
            return True
        try:
            await self._run(text)
        except MoveRejected as exc:  # by the server, or at once by the client's own engine (protocol v2)
            self.screen.note = f"{exc.code.value}: {exc.message}"
        except ClientError as exc:
            self.screen.note = f"{text}: {describe(exc)}"
        self.redraw()
        return True

    async def _run(self, text: str) -> None:
        """One command: at a terminal it only sends; a script waits for its outcome."""
        c, scripted = self.client, not self.interactive
        if text == "help":
            self.screen.note = HELP
        elif text == "ready":
            self.screen.note = "ready: the race starts when every seat is ready"
            await c.ready()
            if scripted:
                await self.wait_for(self.started, "start")
        elif text in ("finish", "resign"):
            self.screen.note = f"{text}: " + (
                "your game ends as it stands"
                if practising(self.screen)
                else "the result comes when every game has ended"
            )
            await (c.finish() if text == "finish" else c.resign())
            if scripted:
                await self.wait_for(self.decided, "result")
        elif text == "rematch":
            self.screen.note = "rematch asked: it starts when every seat asks"
            self.rematched.clear()
            await c.rematch()
            if scripted:
                await self.wait_for(self.rematched, "rematch")
        elif text == "hint" and scripted:
            await self._hint()
        elif text == "hint":  # the hint player may think for seconds: typing goes on meanwhile
            self.screen.note = "hint: thinking..."
            task = asyncio.create_task(self._hint(redraw=True))
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)
        elif text == "undo":
            self.screen.update(await c.undo())  # the board before the move, and what it took back
            self.take_boards()
        elif scripted:
            ack = await c.play(text)  # its ack (or refusal) is the answer, not an event: said here, once
            self.screen.sent[ack.seq] = text
            self.screen.update(ack)
            self.take_boards()
        else:
            self.screen.sent[c.next_seq] = text  # its seq if the rules let it go (its ack may come first)
            await c.move(text)  # in v2 the board shows it at once; its ack or refusal comes as an event
            self.screen.note = f"sent {text}"
            self.take_boards()

    async def _hint(self, *, redraw: bool = False) -> None:
        try:
            move = await self.client.hint()
            self.screen.note = f"hint: {move}" if move else "hint: no move left; finish"
        except ClientError as exc:
            self.screen.note = f"hint: {describe(exc)}"
        if redraw:
            self.redraw()

    async def wait_for(self, event: asyncio.Event, what: str) -> None:
        """A script waits for ``event`` (the start, the result, the rematch); ClientError after SCRIPT_WAIT_S.

        ``asyncio.timeout``, not ``wait_for``: on Python 3.11 ``wait_for`` loses a cancellation
        (Ctrl-C, the end of the run) that comes in the loop turn the event is set in.
        """
        try:
            async with asyncio.timeout(SCRIPT_WAIT_S):
                await event.wait()
        except TimeoutError:
            raise ClientError(f"no {what} within {SCRIPT_WAIT_S:g} s") from None
        if self.screen.lost:
            raise ConnectionLost(self.screen.lost)


def _completer(term: Terminal) -> Callable[[str, int], str | None]:
    def complete(text: str, state: int) -> str | None:
        legal = term.screen.view.legal if term.screen.view else []
        options = completions(text, legal)
        return options[state] if state < len(options) else None

    return complete


async def stdin_lines(interactive: bool, prompting: threading.Event | None = None) -> AsyncIterator[str]:
    """Lines typed (with readline editing when interactive); ends at EOF.

    A daemon thread reads, one line when asked for one (so its prompt follows the
    redraw): a read blocked in a thread of the loop's executor would hold up the
    exit on Ctrl-C until Enter, since ``asyncio.run`` waits for those threads.
    ``prompting`` is set while the prompt is up (``Terminal.redraw`` draws it
    again then, and only then: the screen after a command leaves it to the read).
    With readline it is set once ``input`` has drawn its prompt (readline's
    pre-input hook), not just before: a redraw in between drew it twice.
    """
    shown = prompting or threading.Event()
    said_by_readline = interactive and _when_the_prompt_is_up(shown.set)
    loop = asyncio.get_running_loop()
    wanted: queue.SimpleQueue[None] = queue.SimpleQueue()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def post(line: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody reads any more
            loop.call_soon_threadsafe(lines.put_nowait, line)

    def read() -> None:
        while True:
            wanted.get()
            line: str | None
            try:  # None at the end: input() says so with EOFError, readline() with ""
                if interactive:
                    if not said_by_readline:
                        shown.set()
                    line = input("> ")
                else:
                    line = sys.stdin.readline() or None
            except EOFError:
                line = None
            finally:
                shown.clear()
            post(line)
            if line is None:
                return

    threading.Thread(target=read, name="stdin", daemon=True).start()
    while True:
        wanted.put(None)
        line = await lines.get()
        if line is None:
            return
        yield line


def _when_the_prompt_is_up(call: Callable[[], None]) -> bool:
    """Have readline ``call`` each time ``input`` has drawn its prompt; False without readline."""
    try:
        import readline
    except ImportError:
        return False
    readline.set_pre_input_hook(call)
    return True


@contextlib.contextmanager
def terminal_restored() -> Iterator[None]:
    """Leave the terminal's modes as found: an exit in the middle of a readline edit (Ctrl-C) would
    leave it without echo."""
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        yield
        return
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


async def run_terminal(
    url: str,
    *,
    join: str | None = None,
    watch: str | None = None,
    bot: str | None = None,
    practice: bool = False,
    anyone: bool = False,
    clock: p.QuickClock = 300,
    name: str | None = None,
    deal: int | None = None,
    variant: p.VariantName = "classic",
    lines: AsyncIterator[str] | None = None,
    out: TextIO = sys.stdout,
    interactive: bool | None = None,
    color: bool | None = None,
    identity_file: Path | None = None,
) -> int:
    """Play (create, alone if ``practice``, or join ``join``) or watch ``watch``; lines come from stdin unless given."""
    interactive = sys.stdin.isatty() and out.isatty() if interactive is None else interactive
    color = out.isatty() if color is None else color
    try:
        client = await connect(url, name=name, identity_file=identity_file)
    except ClientError as exc:
        print(f"cannot connect: {exc}", file=sys.stderr)
        return 1
    term = Terminal(client, out, interactive=interactive, color=color)
    term.screen.practice = practice
    pump = asyncio.create_task(term.pump())
    tasks: list[asyncio.Task[object]] = [pump]
    typed = lines if lines is not None else stdin_lines(interactive, term.prompting)
    try:
        if watch:
            watching = await client.watch(match_code(watch))
            term.screen.update(watching)  # the answer is the caller's, not an event (client/api.py)
            term.take_boards()
            if watching.result is not None:
                term.decided.set()
        else:
            if anyone:
                await _race_anyone(term, variant, clock)
            else:
                await _seat(term, join=join, bot=bot, practice=practice, deal=deal, variant=variant)
        if interactive:
            _setup_readline(term)
            tasks.append(asyncio.create_task(term.tick_clock()))
        term.redraw()
        if not watch:
            await term.run_commands(typed)
        elif watching.result is None:  # until the result, the end of the connection, or quit
            ends = [pump, asyncio.create_task(term.decided.wait())]
            if interactive:  # a spectator's only command is quit; a script's stdin is not read
                ends.append(asyncio.create_task(term.run_commands(typed)))
            tasks += ends[1:]
            await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
        return 1 if term.screen.lost else 0
    except ClientError as exc:
        print(f"error: {describe(exc)}", file=sys.stderr)
        return 1
    finally:
        for task in tasks[1:]:
            task.cancel()
        await client.close()
        await asyncio.wait([pump])


async def _seat(
    term: Terminal,
    *,
    join: str | None,
    bot: str | None,
    practice: bool,
    deal: int | None,
    variant: p.VariantName,
) -> None:
    """Join ``join``, or create a match (against a server bot when ``bot``, alone when ``practice``).

    Practice has nobody to get ready for: it starts at once, as on the web page.
    """
    client = term.client
    if join:
        term.screen.update(await client.join(match_code(join)))
    elif practice:
        seated = await client.create(deal=deal, variant=variant, seats=1, time_limit_s=p.MAX_TIME_LIMIT_S)
        term.screen.update(seated)
        await client.ready()
        await term.wait_for(term.started, "start")
        term.screen.note = f"match {seated.match}: practice, with hint and undo; the clock runs"
    else:
        seated = await client.create(deal=deal, variant=variant, bot=bot)  # type: ignore[arg-type]
        against = f"against the {bot} bot" if bot else f"your friend joins with --join {seated.match}"
        term.screen.note = f"match {seated.match}: {against}; type ready"
        term.screen.update(seated)


async def _race_anyone(term: Terminal, variant: p.VariantName, clock: p.QuickClock) -> None:
    """Wait in the quick-race queue, then ready the seat it pairs us into.

    ``race_anyone`` returns the first pairing (it is no event); a pairing after it (the opponent
    never readied, and the queue paired us again) is an event, and ``Terminal.on_event`` readies
    that one: each pairing is readied once (a second ``ready`` could reach the server once the
    countdown began, and be refused with ``wrong_phase`` on the player's screen).
    """

    def queued(msg: p.Queued) -> None:
        term.screen.update(msg)
        term.redraw()

    seated = await term.client.race_anyone(variant=variant, time_limit_s=clock, queued=queued)
    term.screen.update(seated)
    await term.client.ready()
    term.screen.note = f"match {seated.match}: a rated quick race; you are ready"


def _setup_readline(term: Terminal) -> None:
    import readline

    readline.set_completer_delims(" \t")
    readline.set_completer(_completer(term))
    readline.parse_and_bind("tab: complete")


def format_ratings(ratings: p.Ratings) -> list[str]:
    """The lines of a player's ratings by variant, as the web stats page shows them."""
    if not ratings.variants:
        return ["ratings: no rated races yet: race anyone (client play --anyone)"]
    lines = ["ratings:"]
    for v in ratings.variants:
        place = " provisional" if v.provisional else f" #{v.rank} on the board" if v.rank else ""
        lines.append(
            f"  {v.variant}: {v.rating}{'?' if v.provisional else ''}{place}; {counted(v.games, 'rated race')}: "
            f"{v.wins} won, {v.losses} lost, {v.draws} drawn"
        )
    return lines


#: How this client was started, for the commands it tells the user to type next (``live``'s
#: "watch here", every usage line): ``python3 dev.py client`` says so in ``DEVILS_GRIP_CLIENT``,
#: as ``python -m client`` runs only where the .venv is active, which the README never asks for.
PROG = os.environ.get("DEVILS_GRIP_CLIENT") or "python -m client"


def format_live(live: p.Live, site: str) -> str:
    """The races being played, one a line, with where to watch each (``site``: the server's page address)."""
    if not live.races:
        return "no races being played that anyone may watch"
    lines = [f"{counted(live.total, 'race')} being played ({live.order} first):"]
    for race in live.races:
        racers = " vs ".join(
            f"{r.name}{f' ({r.rating})' if r.rating is not None else ''}: {r.leftover} left"
            for r in race.racers
        )
        rated = ", rated" if race.rated else ""
        lines.append(f"  {race.match} {race.variant}{rated}: {racers}  watch {site}/w/{race.match}")
    lines.append(f"open a link in a browser, or watch here: {PROG} watch LINK")
    return "\n".join(lines)


def format_stats(stats: p.Stats, history: p.History, site: str, ratings: p.Ratings | None = None) -> str:
    """A player's ratings, figures, head-to-head record and last games, as plain text (``site``: the server's page address).

    The ratings are the web stats page's: per variant the rating (``?``
    while provisional), its place on the board of the best, the rated races.
    """
    lines = [f"{stats.name}  (player {stats.player})"]
    if ratings is not None:
        lines += format_ratings(ratings)
    lines.append(f"daily streak: {stats.daily_streak} (best {stats.best_daily_streak})")
    for v in stats.variants:
        # the games' grades (RULES.md: brilliant, excellent, good), not ratings: those are per player
        grades = ", ".join(f"{n} {name}" for name, n in v.ratings.items() if n) or "no game graded"
        lines.append(
            f"{v.variant}: {v.played} played, {v.wins} cleared (0 left), mean {v.mean_score:.1f} left, best {v.best_score}; "
            f"{grades}; on the grid {v.mean_on_grid:.1f}, complete piles {v.mean_complete:.1f}"
        )
        lines.append("  last scores: " + " ".join(str(s) for s in v.recent))
    for v in stats.practice:
        lines.append(f"{v.variant} practice (not counted above): {v.played} played, best {v.best_score}")
    if not stats.variants and not stats.practice and not history.games:
        # as the web page says it: two lines of zeros told a newcomer nothing of what to do
        lines.append(
            "no finished games yet: race (client play), practise (client play --practice) or race anyone (client play --anyone)"
        )
    if stats.head_to_head:
        lines.append("head to head:")
        for h in stats.head_to_head:
            lines.append(
                f"  vs {h.name}: {h.wins} won, {h.losses} lost, {h.draws} drawn (last {h.last_match})"
            )
    if history.games:
        lines.append("last games:")
        for g in history.games:
            against = f" vs {g.opponent}" if g.opponent else ""
            lines.append(
                f"  {g.match} {g.variant} {g.outcome}{against}: {g.score} left  replay {site}/r/{g.match}"
            )
    return "\n".join(lines)
