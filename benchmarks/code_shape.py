"""Print the shape of the package: module sizes, the longest functions and those with most
parameters (the limits of the project's house rules: 600 lines a module, 100 lines and six
parameters a function).

    .venv/bin/python benchmarks/code_shape.py [--top N]
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tracecite"


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [node for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = node.args
    names = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    count = len([a for a in names if a.arg not in ("self", "cls")])
    return count + (args.vararg is not None) + (args.kwarg is not None)


def main(argv: list[str] | None = None) -> int:
    """Print the three tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--top", type=int, default=8)
    top = parser.parse_args(argv).top
    modules: list[tuple[int, str]] = []
    lengths: list[tuple[int, str]] = []
    params: list[tuple[int, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(PACKAGE.parent))
        modules.append((len(text.splitlines()), name))
        for node in _functions(ast.parse(text)):
            where = f"{name}:{node.lineno} {node.name}"
            lengths.append(((node.end_lineno or node.lineno) - node.lineno + 1, where))
            params.append((_parameters(node), where))
    print(f"modules: {len(modules)}, lines: {sum(n for n, _ in modules)}, "
          f"over 600 lines: {sum(1 for n, _ in modules if n > 600)}")
    for n, where in sorted(modules, reverse=True)[:top]:
        print(f"  {n:5d}  {where}")
    print(f"functions: {len(lengths)}, over 100 lines: {sum(1 for n, _ in lengths if n > 100)}")
    for n, where in sorted(lengths, reverse=True)[:top]:
        print(f"  {n:5d}  {where}")
    print(f"over 6 parameters: {sum(1 for n, _ in params if n > 6)}")
    for n, where in sorted(params, reverse=True)[:top]:
        print(f"  {n:5d}  {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
