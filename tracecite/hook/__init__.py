"""``tracecite hook``, the one entry point for pre-commit and the GitHub Action (docs/hook.md):
git (:mod:`~tracecite.hook.git`), the globs that select files
(:mod:`~tracecite.hook.selection`), and the stages (:mod:`~tracecite.hook.stages`)."""
