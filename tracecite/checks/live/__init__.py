"""Checking quotes against sources loaded now (web pages or local files), each loaded once.

A live run (:class:`~tracecite.checks.live.run.LiveRun`) groups the quotes by source and loads
every distinct source once on a bounded pool of threads (fetching waits on the network, so
threads overlap it); HTML is parsed in worker processes
(:class:`~tracecite.checks.parse_pool.ParsePool`). A loader thread hands its page to the workers
and goes on to its next source without waiting for the parse; when the workers fall behind, at
most ``concurrency`` pages wait for them and the loaders pause, so at most ``2 × concurrency``
pages are in memory at once, however many sources there are.

Memory follows the sources, not the quotes: the checks are read by index from their inputs
(:class:`~tracecite.checks.quotes.QuoteChecks`), a source's group is an array of indexes, its
quotes are read when its page is matched, and what a run keeps of a source (its group, its
stored verdicts) goes once the source is settled. A :class:`QuoteCheck` is made only for a
quote that gets a finding.

An optional verdict cache (docs/web-over-time.md#the-cache) is consulted on the run's thread
before any source is loaded and fed as sources settle: the loader threads only read the
validators it gave and take the digest of what they loaded.

A loader whose sources live on hosts (the web) shares its request slots per host with the run:
a loader thread is handed a source together with the slot of its first request, so no thread
waits on a busy host while another host's source waits.

The parts, each a module (docs/design/concurrency.md says which thread runs what):

- :mod:`~tracecite.checks.live.records`: what a loader is and gives (``Loader``, ``Loaded``,
  ``Fetched``), what the run reports to (``Progress``) and returns (``LiveResult``);
- :mod:`~tracecite.checks.live.run`: the run itself (``LiveRun``), on the caller's thread;
- :mod:`~tracecite.checks.live.scheduler`: which source a loader thread takes next, per host;
- :mod:`~tracecite.checks.live.loaders`: the loader threads and the typed messages they send
  back to the run's thread;
- :mod:`~tracecite.checks.live.tally`: the findings and counts, settled source by source, and
  the verdict cache (``VerdictCache``, ``Remembered``).
"""
