"""What a run takes from where it runs, read in one place (:func:`read_surroundings`): the
configuration file (``.tracecite.toml`` or ``[tool.tracecite]``, docs/hook.md) and the
environment variables of the command line (``GITHUB_ACTIONS``, ``NO_COLOR``,
``GITHUB_STEP_SUMMARY``). The command line, the library (:mod:`tracecite.api`) and a directory
given to a command all find the configuration here; the Action's own ``TRACECITE_*`` inputs are
:func:`tracecite.action.read_inputs`'.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: the configuration only when one is looked for
    from tracecite.command_table import Command
    from tracecite.config import Config
    from tracecite.inputs.directories import Expanded
    from tracecite.settings import Settings

GLOB_OPTIONS = ("notes", "traces", "documents", "exclude")
"""The options a directory given to any command takes from the configuration."""


@dataclass(frozen=True)
class Surroundings:
    """The configuration file found (if one was looked for) and the environment variables."""

    environ: Mapping[str, str]
    config_path: str | None = None
    config_values: Mapping[str, Any] = field(default_factory=dict)
    """The configuration's values, checked by the settings table, by option name."""

    @property
    def on_github_actions(self) -> bool:
        """Whether the run is a GitHub Actions step."""
        return self.environ.get("GITHUB_ACTIONS") == "true"

    @property
    def default_format(self) -> str:
        """The report format when none is asked for: ``github`` on GitHub Actions."""
        return "github" if self.on_github_actions else "console"

    @property
    def color(self) -> bool:
        """Whether colour is allowed on a terminal (``NO_COLOR`` unset)."""
        return "NO_COLOR" not in self.environ

    @property
    def step_summary_path(self) -> str | None:
        """Where the Markdown step summary goes (``$GITHUB_STEP_SUMMARY``; None: nowhere)."""
        return self.environ.get("GITHUB_STEP_SUMMARY") or None


def read_surroundings(config: str | None = None, *, find_config: bool = False,
                      environ: Mapping[str, str] | None = None) -> Surroundings:
    """The run's surroundings: the environment (``os.environ`` unless given) and, when
    ``find_config``, the configuration file: ``config`` (``--config``), else the one found here,
    else at the git top level, else none (a bad one raises
    :class:`~tracecite.errors.ConfigError`, TC104)."""
    environ = os.environ if environ is None else environ
    if not find_config:
        return Surroundings(environ)
    from tracecite.config import discover

    found: Config = discover(config)
    return Surroundings(environ, found.path, found.values)


def settings_for(command: Command, given: Mapping[str, Any], *,
                 action: Mapping[str, Any] | None = None, library: bool = False) -> Settings:
    """A run's settings: ``given`` (flags, or a library call's keyword options) over
    ``action`` (the Action's inputs) over the configuration file, for a command that reads
    one (its record's ``reads_config``), over the defaults."""
    from tracecite.settings import resolve

    if not command.reads_config:
        return resolve(command.name, given, action=action, library=library)
    around = read_surroundings(given.get("config", (action or {}).get("config")),
                               find_config=True)
    return resolve(command.name, given, action=action, config=around.config_values,
                   config_path=around.config_path, library=library)


def expand_directories(paths: Sequence[str], *, notes: bool = True, traces: bool = True,
                       documents: bool = True) -> Expanded:
    """Replace each directory among ``paths`` by the files under it that the notes globs (if
    ``notes``), the traces globs (if ``traces``) and the documents globs (if ``documents``)
    select and no exclude glob removes (a file the notes or traces globs select is never a
    document, whatever the command reads); other paths stay as they are, in place. The
    configuration is read only when a directory is given (a bad one is TC104,
    :class:`~tracecite.errors.ConfigError`)."""
    from tracecite.inputs.directories import Expanded, expand_with

    if not any(os.path.isdir(p) for p in paths):
        return Expanded(tuple(paths))
    from tracecite.settings import Settings

    around = read_surroundings(find_config=True)
    configured = Settings(**{name: value for name, value in around.config_values.items()
                             if name in GLOB_OPTIONS})
    # Only the globs: the command's other settings never come from the configuration.
    globs = Settings(config_path=around.config_path, notes=configured.notes,
                     traces=configured.traces, documents=configured.documents,
                     exclude=configured.exclude)
    kinds = [kind for kind, wanted in (("notes", notes), ("traces", traces),
                                       ("documents", documents)) if wanted]
    return expand_with(paths, globs, kinds)
