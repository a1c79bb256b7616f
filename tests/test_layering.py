"""The layers of boulanger, read from every module's imports (with ``ast``, nothing is run).

The rules:

* ``engine/`` imports only the standard library, and no I/O from it;
* ``solver/`` imports only the standard library and ``engine/``;
* ``engine/``, ``solver/`` and ``race/`` import nothing that does I/O or
  JSON (``NO_IO``): the server drives them, they never wait on anything;
* no package imports a higher one (``LAYERS``, lowest first);
* no circle of imports between modules, imports under ``if TYPE_CHECKING:``
  included: a module that needs another's types depends on it as much as one
  that calls it, and a circle hidden from the interpreter is one all the same.

Each failure names the import (file and line) and the rule it breaks.
``KNOWN_BREACHES`` lists the breaches that exist today, each to be removed
with the change that fixes it; a new breach fails, and so does a listed one
that is gone (so the list only shrinks).
"""

from __future__ import annotations

import ast
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import boulanger

ROOT = Path(boulanger.__file__).resolve().parent
PACKAGE = "boulanger"

# Lowest first: a module may import its own layer and those before it.
LAYERS = ("engine", "solver", "race", "codec", "broker", "web", "cli")
# Modules at the top of the package, and the layer each belongs to.
TOP_MODULES = {
    "__init__.py": "engine",
    "codec.py": "codec",
    "cli.py": "cli",
    "__main__.py": "cli",
}
# What the pure layers may not import: I/O, JSON, the event loop, the web and the store.
NO_IO = frozenset(
    {"asyncio", "json", "socket", "sqlite3", "starlette", "redis", "uvicorn", "websockets"}
)
PURE = ("engine", "solver", "race")
# Layers that import nothing but the standard library and these layers.
STDLIB_ONLY = {"engine": ("engine",), "solver": ("engine", "solver")}

# Breaches that exist today: (importing file, what it imports) -> why it is
# still there. Remove an entry with the change that fixes it.
KNOWN_BREACHES: dict[tuple[str, str], str] = {}


@dataclass(frozen=True, slots=True)
class Import:
    """One import in one module: ``target`` is a dotted name, or a file of the package."""

    module: str  # the importing file, relative to the package: "race/race.py"
    line: int
    target: str  # "json", "redis.asyncio", or "engine/board.py"
    internal: bool


@dataclass(frozen=True, slots=True)
class Breach:
    """An import that breaks a rule, or a circle of imports."""

    key: tuple[str, str]  # (importing file, target), as KNOWN_BREACHES lists it
    message: str


def layer_of(module: str) -> str | None:
    """The layer of a file of the package ("race/race.py" -> "race"); None when it has none."""
    head, _, rest = module.partition("/")
    if rest:
        return head if head in LAYERS else None
    return TOP_MODULES.get(module)


class _ImportFinder(ast.NodeVisitor):
    """Every import statement, at any depth (in functions, under ``if TYPE_CHECKING:``)."""

    def __init__(self) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append(node)


def _file_of(root: Path, dotted: str) -> str | None:
    """The file of the package that a dotted name under it imports, or None if it is not one."""
    parts = dotted.split(".")[1:]
    path = root.joinpath(*parts)
    if path.is_dir() and (path / "__init__.py").is_file():
        return (path / "__init__.py").relative_to(root).as_posix()
    if path.with_suffix(".py").is_file():
        return path.with_suffix(".py").relative_to(root).as_posix()
    return None


def imports_of(root: Path, module: str) -> list[Import]:
    """The imports of one file of the package, internal ones resolved to files."""
    tree = ast.parse((root / module).read_text(encoding="utf-8"), module)
    package = [PACKAGE, *module.split("/")[:-1]]
    finder = _ImportFinder()
    finder.visit(tree)
    found: list[Import] = []
    for node in finder.found:
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = package[: len(package) - node.level + 1]
                dotted = ".".join([*base, *([node.module] if node.module else [])])
            else:
                dotted = node.module or ""
            if dotted.split(".")[0] == PACKAGE:
                # "from .x import y": y may be a module of its own, else a name in x.
                for alias in node.names:
                    sub = f"{dotted}.{alias.name}"
                    targets.append(sub if _file_of(root, sub) else dotted)
            else:
                targets = [dotted]
        for target in dict.fromkeys(targets):
            if target.split(".")[0] == PACKAGE:
                file = _file_of(root, target)
                assert file is not None, f"{module}:{node.lineno}: {target} is not in the package"
                found.append(Import(module, node.lineno, file, True))
            else:
                found.append(Import(module, node.lineno, target, False))
    return found


def all_imports(root: Path) -> list[Import]:
    """The imports of every file of the package."""
    modules = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    return [imp for module in modules for imp in imports_of(root, module)]


def rule_breaches(imports: list[Import]) -> list[Breach]:
    """Imports that break the rules on what each layer may import."""
    breaches: list[Breach] = []
    for imp in imports:
        where = f"{imp.module}:{imp.line} imports {imp.target}"
        layer = layer_of(imp.module)
        if layer is None:
            breaches.append(
                Breach(
                    (imp.module, imp.target),
                    f"{where}: {imp.module} has no layer (LAYERS, TOP_MODULES)",
                )
            )
            continue
        top = imp.target.split(".")[0]
        if imp.internal:
            target_layer = layer_of(imp.target)
            if target_layer is None:
                message = f"{where}: {imp.target} has no layer (LAYERS, TOP_MODULES)"
            elif LAYERS.index(target_layer) > LAYERS.index(layer):
                message = f"{where}: {layer}/ may not import a higher layer ({target_layer}/)"
            elif layer in STDLIB_ONLY and target_layer not in STDLIB_ONLY[layer]:
                allowed = " and ".join(f"{name}/" for name in STDLIB_ONLY[layer])
                message = f"{where}: {layer}/ imports only the standard library and {allowed}"
            else:
                continue
        elif layer in PURE and top in NO_IO:
            message = f"{where}: {layer}/ does no I/O and no JSON (it may not import {top})"
        elif layer in STDLIB_ONLY and top not in sys.stdlib_module_names:
            message = f"{where}: {layer}/ imports only the standard library"
        else:
            continue
        breaches.append(Breach((imp.module, imp.target), message))
    return breaches


Edges = dict[str, dict[str, Import]]


def import_edges(imports: list[Import], ignored: set[tuple[str, str]]) -> Edges:
    """Which file imports which (``edges[a][b]`` is the import), apart from ``ignored`` ones."""
    edges: Edges = {}
    for imp in imports:
        if imp.internal and (imp.module, imp.target) not in ignored:
            edges.setdefault(imp.module, {}).setdefault(imp.target, imp)
    return edges


def shortest_path(edges: Edges, source: str, target: str) -> list[Import] | None:
    """The imports along a shortest path from ``source`` to ``target`` (the same: a circle)."""
    reached = {source}
    frontier: list[tuple[str, list[Import]]] = [(source, [])]
    while frontier:
        following = []
        for node, path in frontier:
            for nxt, imp in sorted(edges.get(node, {}).items()):
                if nxt == target:
                    return [*path, imp]
                if nxt not in reached:
                    reached.add(nxt)
                    following.append((nxt, [*path, imp]))
        frontier = following
    return None


def circle_breaches(imports: list[Import], ignored: set[tuple[str, str]]) -> list[Breach]:
    """The shortest circle of imports through each file (each circle once), apart from ``ignored`` edges."""
    edges = import_edges(imports, ignored)
    found: list[Breach] = []
    seen: set[frozenset[str]] = set()
    for start in sorted(edges):
        circle = shortest_path(edges, start, start)
        if circle is None or frozenset(imp.module for imp in circle) in seen:
            continue
        seen.add(frozenset(imp.module for imp in circle))
        path = " -> ".join(f"{imp.module}:{imp.line}" for imp in circle)
        last = circle[-1]
        found.append(Breach((last.module, last.target), f"a circle of imports: {path} -> {start}"))
    return found


def breaches(root: Path, known: set[tuple[str, str]]) -> list[Breach]:
    """Every breach of the rules in the package at ``root``, ``known`` ones left out."""
    imports = all_imports(root)
    found = [b for b in rule_breaches(imports) if b.key not in known]
    return found + circle_breaches(imports, known)


def gone_breaches(imports: list[Import], known: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The entries of ``known`` that break no rule and close no circle any more."""
    rules = {b.key for b in rule_breaches(imports)}
    edges = import_edges(imports, set())

    def closes_a_circle(module: str, target: str) -> bool:
        return target in edges.get(module, {}) and shortest_path(edges, target, module) is not None

    return sorted(key for key in known if key not in rules and not closes_a_circle(*key))


def _report(found: list[Breach]) -> str:
    return "\n".join(["imports that break the layering:", *(f"  {b.message}" for b in found)])


def test_the_package_keeps_its_layers() -> None:
    found = breaches(ROOT, set(KNOWN_BREACHES))
    assert not found, _report(found)


def test_every_known_breach_is_still_there() -> None:
    gone = gone_breaches(all_imports(ROOT), set(KNOWN_BREACHES))
    assert not gone, f"fixed, so remove these from KNOWN_BREACHES: {gone}"


def test_every_module_has_a_layer_and_every_layer_modules() -> None:
    layers = {
        p.relative_to(ROOT).as_posix(): layer_of(p.relative_to(ROOT).as_posix())
        for p in ROOT.rglob("*.py")
    }
    without = sorted(module for module, layer in layers.items() if layer is None)
    assert not without, f"give these a layer (LAYERS, TOP_MODULES): {without}"
    assert set(layers.values()) == set(LAYERS)


# -- the checker itself, on a made-up package that breaks every rule ----------


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


BAD_PACKAGE = {
    "__init__.py": "",
    "cli.py": "from .web import app\n",
    "engine/__init__.py": "from .board import Board\n",
    "engine/board.py": """\
        import json
        from dataclasses import dataclass

        from ..solver import search
        """,
    "engine/cards.py": "import numpy\nfrom typing import TYPE_CHECKING\n",
    "solver/__init__.py": "",
    "solver/search.py": """\
        import subprocess

        from ..engine.board import Board
        from ..race import race


        def solve() -> None:
            import asyncio
        """,
    "race/__init__.py": "",
    "race/race.py": "import redis.asyncio\nfrom .. import engine\n",
    "broker/__init__.py": "",
    "broker/base.py": """\
        def open_broker() -> None:
            from .memory import MemoryBroker
        """,
    "broker/memory.py": "from .base import open_broker\n",
    "web/__init__.py": "",
    "web/app.py": """\
        from typing import TYPE_CHECKING

        from . import http

        if TYPE_CHECKING:
            from ..cli import main
        """,
    "web/http.py": """\
        import typing

        if typing.TYPE_CHECKING:
            from .app import App
        else:
            from ..broker import base
        """,
    "web/socket.py": "from ..cli import main\n",
    "extra.py": "import os\n",
}


def test_the_checker_finds_every_kind_of_breach(tmp_path: Path) -> None:
    root = tmp_path / PACKAGE
    _write(root, BAD_PACKAGE)
    messages = sorted(b.message for b in breaches(root, set()))
    assert messages == sorted(
        [
            "engine/board.py:1 imports json: engine/ does no I/O and no JSON (it may not import json)",
            "engine/board.py:4 imports solver/search.py: engine/ may not import a higher layer (solver/)",
            "engine/cards.py:1 imports numpy: engine/ imports only the standard library",
            "extra.py:1 imports os: extra.py has no layer (LAYERS, TOP_MODULES)",
            "solver/search.py:4 imports race/race.py: solver/ may not import a higher layer (race/)",
            "solver/search.py:8 imports asyncio: solver/ does no I/O and no JSON (it may not import asyncio)",
            "race/race.py:1 imports redis.asyncio: race/ does no I/O and no JSON (it may not import redis)",
            # Imports under TYPE_CHECKING count, for layers and for circles.
            "web/app.py:6 imports cli.py: web/ may not import a higher layer (cli/)",
            "a circle of imports: cli.py:1 -> web/app.py:6 -> cli.py",
            "a circle of imports: web/http.py:4 -> web/app.py:3 -> web/http.py",
            "web/socket.py:1 imports cli.py: web/ may not import a higher layer (cli/)",
            "a circle of imports: broker/base.py:2 -> broker/memory.py:1 -> broker/base.py",
            "a circle of imports: engine/board.py:4 -> solver/search.py:3 -> engine/board.py",
            "a circle of imports: engine/__init__.py:1 -> engine/board.py:4 -> solver/search.py:4"
            " -> race/race.py:2 -> engine/__init__.py",
        ]
    )


def test_known_breaches_are_left_out_and_only_those(tmp_path: Path) -> None:
    root = tmp_path / PACKAGE
    _write(root, BAD_PACKAGE)
    known = {("engine/board.py", "json"), ("broker/base.py", "broker/memory.py")}
    messages = {b.message for b in breaches(root, known)}
    assert not any(m.startswith("engine/board.py:1 ") for m in messages)
    assert not any("broker/memory.py:1" in m for m in messages)
    assert "engine/cards.py:1 imports numpy: engine/ imports only the standard library" in messages
    assert len(messages) == 12


def test_a_known_breach_that_is_fixed_must_leave_the_list(tmp_path: Path) -> None:
    root = tmp_path / PACKAGE
    _write(root, BAD_PACKAGE)
    still = {("engine/board.py", "json"), ("broker/base.py", "broker/memory.py")}
    fixed = {("engine/board.py", "dataclasses"), ("broker/memory.py", "broker/__init__.py")}
    assert gone_breaches(all_imports(root), still | fixed) == sorted(fixed)


def test_a_circle_across_three_modules_is_found(tmp_path: Path) -> None:
    root = tmp_path / PACKAGE
    _write(
        root,
        {
            "__init__.py": "",
            "race/__init__.py": "",
            "race/a.py": "from . import b\n",
            "race/b.py": "from .c import x\n",
            "race/c.py": "import boulanger.race.a\n",
        },
    )
    assert [b.message for b in breaches(root, set())] == [
        "a circle of imports: race/a.py:1 -> race/b.py:1 -> race/c.py:1 -> race/a.py"
    ]
