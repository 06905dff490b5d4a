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

from collections.abc import Callable  # after the signals are held

_exit_code: list[int | None] = [None]
"""The run's exit code once its main function has returned, for :func:`_last_look`."""


def _last_look() -> None:
    """The process's last Python: a stop signal held since the run let go of its handlers makes
    the exit code 128 + its number (as one during the report's writing does). Then the process
    ends here, its streams flushed: what Python would do after this (collecting what the run
    left) can take no signal, so none may come in it and be lost."""
    import os
    import sys

    code = _exit_code[0]
    if code is None:  # the run's main function never returned: Python ends the process
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    pending = _signal.sigpending() if hasattr(_signal, "sigpending") else set()
    held = [s for s in (_signal.SIGINT, _signal.SIGTERM) if s in pending]
    os._exit(128 + held[0] if held and code < 128 else code)


def run_held(main: Callable[[], int]) -> int:
    """Run an entry point's ``main`` with the stop signals held since this module's first lines
    (the ``tracecite`` command's, and ``python -m tracecite.action``'s), and end the process
    with :func:`_last_look`."""
    import atexit

    atexit.register(_last_look)  # registered first: run last
    code = main()
    _exit_code[0] = code
    return code


def _main() -> int:
    import sys

    from tracecite.command_table import VERIFY_FILES  # the command line imports it first

    if sys.argv[1:2] == [VERIFY_FILES.name]:
        # Its sources are often PDFs: the PDF workers load the engine while the command line's
        # own modules are imported (the live run's parse pool takes them, or ends them).
        from tracecite.pdf.reader import started_early
        from tracecite.workers import cores

        with started_early(cores()):
            from tracecite.cli import entry as run_entry

            return run_entry()
    from tracecite.cli import entry as run_entry

    return run_entry()


def entry() -> int:
    """The ``tracecite`` command: :func:`tracecite.cli.entry`, the stop signals held until it
    installs its own handlers, and held again after."""
    return run_held(_main)


if __name__ == "__main__":
    raise SystemExit(entry())
