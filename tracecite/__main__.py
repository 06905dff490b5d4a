"""``python -m tracecite`` and the ``tracecite`` command (:func:`entry`).

The stop signals are held from this module's first lines, before anything of TraceCite's own is
imported: a SIGINT or SIGTERM during start-up waits, and the run takes it as soon as its handlers
are in place; once the run has let them go they are held again, and one that came meanwhile still
sets the exit code as the process ends
(docs/design/concurrency.md#from-the-first-instruction-to-the-last). Only the standard library
comes before.
"""

import signal as _signal

if hasattr(_signal, "pthread_sigmask"):
    _signal.pthread_sigmask(_signal.SIG_BLOCK, (_signal.SIGINT, _signal.SIGTERM))
else:  # no signal mask here (Windows): ignored until the run installs its handlers
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)

_exit_code = [0]
"""The run's exit code, for :func:`_last_look`."""


def _last_look() -> None:
    """The process's last Python: a stop signal held since the run let go of its handlers makes
    the exit code 128 + its number (as one during the report's writing does)."""
    import os
    import sys

    pending = _signal.sigpending() if hasattr(_signal, "sigpending") else set()
    held = [s for s in (_signal.SIGINT, _signal.SIGTERM) if s in pending]
    if held and _exit_code[0] < 128:
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(128 + held[0])


def entry() -> int:
    """The ``tracecite`` command: :func:`tracecite.cli.entry`, the stop signals held until it
    installs its own handlers, and held again after."""
    import atexit

    atexit.register(_last_look)  # registered first: run last
    from tracecite.cli import entry as run_entry

    _exit_code[0] = run_entry()
    return _exit_code[0]


if __name__ == "__main__":
    raise SystemExit(entry())
