"""A match as an event-sourced state machine: commands in, events out, no I/O.

A match *is* its event log (``events``); its state is their fold, on which
commands are decided (``state``); each event is rendered per audience
(``render``). Because the state is a fold of the log, any process can rebuild
any match, a resume can replay exactly what a seat missed, and two processes
racing to change a match conflict at the append instead of corrupting it.
"""

from .events import Event as Event
from .events import decode_events as decode_events
from .events import encode_events as encode_events
from .render import Audience as Audience
from .render import Present as Present
from .state import DEFAULT_GRACE_MS as DEFAULT_GRACE_MS
from .state import Duplicate as Duplicate
from .state import Match as Match
