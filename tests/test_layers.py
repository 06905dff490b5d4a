"""The package's imports: no cycle, and no import up a layer (issue 21).

The import graph is read from the source with ``ast``. Every import counts, those inside
functions too (a deferred import is still a dependency); those in an ``if TYPE_CHECKING:`` block
do not (they never run). Relative imports are resolved, and ``from pkg import name`` is an import
of the module ``pkg.name`` when there is one, else of ``pkg``.

The layers, lowest first; a module may import modules of its own layer and of those below:

0. base: the package (``__version__``), codes, streams, matching, model, stops, workers, the
   report format names, and the fetcher's pure vocabulary: its limits, its errors, URL and
   address policies and ``--connect-to`` rules (the option checks parse with them).
1. option checks: ``values`` and ``fetch.options`` (FetchOptions checks its values with them).
2. records: findings, errors, a report's JSON (``report_writer``, ``report_reader``), and
   ``inputs.files``, the opening of a file with TC101/TC102 findings, which the report reader
   uses to read a report file.
3. reading and loading: ``inputs``, ``visible``, ``fetch``, ``pdf``.
4. checks: ``checks``, ``cache``, ``progress``, ``jobs``.
5. reporters.
6. settings (its table names the reporters' formats), the table of commands it derives the
   option groups from, and the record of what a run does (``run.plan``), which the table holds.
7. runs: the ``run`` package, ``hook``, ``importers``, ``merge``, ``config``, and
   ``surroundings`` (the configuration file and the environment a run reads).
8. entry points: ``api``, ``cli``, ``action``, ``__main__``; nothing else imports them.

:data:`LAYERS` places a module by its exact name, or by the longest ``pkg.*`` entry over it (the
package and everything under it), so a new module lands in its package's layer; a module it
cannot place fails :func:`test_every_module_has_a_layer`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import tracecite

PACKAGE = Path(tracecite.__file__).parent

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("tracecite", "tracecite.chunked_json", "tracecite.codes", "tracecite.streams",
              "tracecite.matching", "tracecite.model", "tracecite.stops", "tracecite.workers",
              "tracecite.report_formats", "tracecite.text_directive", "tracecite.fetch.limits",
              "tracecite.fetch.errors", "tracecite.globs", "tracecite.ascii_case",
              "tracecite.fetch.url_policy", "tracecite.fetch.address_policy",
              "tracecite.fetch.connect_to")),
    ("option checks", ("tracecite.values", "tracecite.fetch.options")),
    ("records", ("tracecite.findings", "tracecite.errors", "tracecite.report_writer",
                 "tracecite.report_reader", "tracecite.inputs.files")),
    ("reading and loading", ("tracecite.inputs.*", "tracecite.visible.*", "tracecite.fetch.*",
                             "tracecite.pdf.*")),
    ("checks", ("tracecite.checks.*", "tracecite.cache", "tracecite.progress", "tracecite.jobs")),
    ("reporters", ("tracecite.reporters.*",)),
    ("settings", ("tracecite.settings", "tracecite.command_table", "tracecite.run.plan")),
    ("runs", ("tracecite.run.*", "tracecite.hook.*", "tracecite.importers.*", "tracecite.merge",
              "tracecite.config", "tracecite.surroundings")),
    ("entry points", ENTRY_POINTS := ("tracecite.api", "tracecite.cli", "tracecite.action",
                                      "tracecite.__main__")),
)
"""Each layer's name and its modules, lowest first (module docstring)."""

@dataclass(frozen=True)
class Import:
    """One import of a package module by another, at the first line that makes it."""

    importer: str
    imported: str
    path: Path
    line: int

    def __str__(self) -> str:
        return f"{self.path.relative_to(PACKAGE.parent)}:{self.line}: {self.importer} imports " \
               f"{self.imported}"


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__.py``)."""
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _statements(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in ``tree`` that can run: not in an ``if TYPE_CHECKING:`` body."""
    todo: list[ast.AST] = list(ast.iter_child_nodes(tree))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            todo.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def _known(name: str, known: dict[str, Path]) -> str | None:
    """The package module ``name`` stands for: itself, else its nearest enclosing module."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, known: dict[str, Path]) -> list[Import]:
    """The package modules that module ``name`` (the file ``path``) imports, each once."""
    found: dict[str, Import] = {}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for statement in _statements(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(statement, ast.Import):
            targets = [alias.name for alias in statement.names]
        else:
            base = statement.module or ""
            if statement.level:
                parent = package[:len(package) - statement.level + 1]
                base = ".".join([*parent, base] if base else parent)
            # ``from mod import name`` imports mod; ``from pkg import mod`` imports the module
            # pkg.mod and pkg itself, whose __init__ it runs first and reads the name from.
            targets = [base, *(f"{base}.{alias.name}" for alias in statement.names
                               if f"{base}.{alias.name}" in known)]
        for target in targets:
            module = _known(target, known) if target.split(".")[0] == "tracecite" else None
            if module is not None and module != name and module not in found:
                found[module] = Import(name, module, path, statement.lineno)
    return sorted(found.values(), key=lambda i: i.line)


def graph() -> dict[str, list[Import]]:
    """The package's import graph: each module's imports of package modules."""
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def layer_of(module: str) -> int | None:
    """The index in :data:`LAYERS` of ``module``'s layer: its own entry, else the longest
    ``pkg.*`` entry over it (None: no entry places it)."""
    best: tuple[int, int] | None = None  # (length of the matching prefix, layer)
    for index, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            if entry == module:
                return index
            prefix = entry.removesuffix(".*")
            covers = entry.endswith(".*") and (module == prefix
                                               or module.startswith(prefix + "."))
            if covers and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def find_cycle(edges: dict[str, list[str]]) -> list[str] | None:
    """One import cycle as the modules along it, the first repeated at the end (None: none)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(edges):
        if state.get(start):
            continue
        path = [start]
        state[start] = 1
        stack = [iter(sorted(edges[start]))]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(step) == 1:
                return [*path[path.index(step):], step]
            elif not state.get(step):
                state[step] = 1
                path.append(step)
                stack.append(iter(sorted(edges.get(step, ()))))
    return None


def test_no_import_cycle() -> None:
    edges = {name: [i.imported for i in found] for name, found in graph().items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or ())


def test_every_module_has_a_layer() -> None:
    unplaced = [name for name in modules() if layer_of(name) is None]
    assert not unplaced, (f"no layer for {', '.join(unplaced)}: add each (or its package as "
                          "'tracecite.PKG.*') to LAYERS in tests/test_layers.py")


def test_no_import_up_a_layer() -> None:
    upward = []
    for found in graph().values():
        for imp in found:
            low, high = layer_of(imp.importer), layer_of(imp.imported)
            if low is None or high is None:
                continue  # an unplaced module fails test_every_module_has_a_layer
            if high > low:
                upward.append(f"{imp} (layer {LAYERS[low][0]!r} imports layer "
                              f"{LAYERS[high][0]!r})")
    assert not upward, "imports up a layer:\n" + "\n".join(upward)


def test_only_entry_points_import_an_entry_point() -> None:
    wrong = [str(imp) for found in graph().values() for imp in found
             if imp.imported in ENTRY_POINTS and imp.importer not in ENTRY_POINTS]
    assert not wrong, "entry points imported by other modules:\n" + "\n".join(wrong)


# ---- the graph reader itself ----------------------------------------------------------------

def test_the_reader_counts_deferred_imports_and_skips_type_only_ones(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "import tracecite.visible.lexbor as lexbor\n"
        "from tracecite import codes, __version__\n"
        "from . import model\n"
        "if TYPE_CHECKING:\n"
        "    from tracecite.settings import Settings\n"
        "else:\n"
        "    from tracecite.stops import STOP_SIGNALS\n"
        "def later():\n"
        "    from tracecite.findings import Finding\n", encoding="utf-8")
    found = imports_of("tracecite.probe", source, modules())
    assert [i.imported for i in found] == ["tracecite.visible.lexbor", "tracecite.codes",
                                           "tracecite", "tracecite.model", "tracecite.stops",
                                           "tracecite.findings"]


def test_a_cycle_is_found_and_shown() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None


def test_a_new_module_lands_in_its_package_layer() -> None:
    names = [name for name, _ in LAYERS]
    assert names[layer_of("tracecite.run.checking") or 0] == "runs"
    assert names[layer_of("tracecite.inputs.selection") or 0] == "reading and loading"
    assert names[layer_of("tracecite.inputs.files") or 0] == "records"
    assert layer_of("tracecite.somewhere_new") is None


# ---- the live run stays in parts ----------------------------------------------------------------

LIVE_PACKAGE = PACKAGE / "checks" / "live"


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Its parameters, ``self`` and ``cls`` aside; ``*args`` and ``**kwargs`` count one each."""
    args = function.args
    named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return (len([name for name in named if name not in ("self", "cls")])
            + (args.vararg is not None) + (args.kwarg is not None))


def test_the_live_runs_modules_and_functions_stay_small() -> None:
    """The scheduler, the loader threads, the tally and the run each a module of their own:
    none over 600 lines, no function over 100 lines or with more than 6 parameters."""
    too_big = []
    for path in sorted(LIVE_PACKAGE.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        if len(source.splitlines()) > 600:
            too_big.append(f"{path.name}: {len(source.splitlines())} lines")
        for function in _functions(ast.parse(source)):
            length = (function.end_lineno or function.lineno) - function.lineno + 1
            if length > 100 or _parameters(function) > 6:
                too_big.append(f"{path.name}:{function.lineno} {function.name}: {length} lines, "
                               f"{_parameters(function)} parameters")
    assert not too_big, "\n".join(too_big)
