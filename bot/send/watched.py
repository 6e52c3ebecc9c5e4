"""A turn told in the open Mini App instead of a new DM (issue 50).

Someone whose Mini App page of a table is open and visible (its heartbeats fresh, its event stream
open: ``bot.web.miniapp.watching``) sees their turn there at once: a banner and a buzz
(``bot/web/miniapp/static/watching.js``). Their turn's prompt, a new DM that notifies, then waits
``GRACE`` seconds before it may go (``Parcel.not_before``, honoured by the lane's policy and its
task); their page acknowledges the turn it shows (``Presenter.turn_seen``: the prompt is withdrawn)
or they act (the DM's next state replaces the prompt, an edit), and no new DM goes out for that
turn. A page hidden or closed sends the prompt at once (``Presenter.stopped_watching``); a stale
heartbeat means the prompt gets no grace at all. The grace is no delay for the turn clock: a
prompt in its grace does not hold the deadline (``Presenter.prompt_waits``) and gives no time back
(``Courier._late``).
"""

from __future__ import annotations

# Seconds a watched person's turn prompt waits before it may go as a new DM: more than the page's
# heartbeat (which acknowledges the turn it shows) and a round trip, so a page that is watching
# always answers in time, and short enough that someone who was not looking is told soon.
GRACE = 4.0
