"""A run of a command, in its parts: the plan (:mod:`~tracecite.run.plan`), the inputs read once
(:mod:`~tracecite.run.inputs`), the live checks' wiring (:mod:`~tracecite.run.live`, with the
loaders and the cache in :mod:`~tracecite.run.loaders`), the one report assembly
(:mod:`~tracecite.run.assemble`), and the commands (:mod:`~tracecite.run.commands`).
"""
