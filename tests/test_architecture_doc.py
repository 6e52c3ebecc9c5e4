"""docs/ARCHITECTURE.md stays true: every module, class and function it names exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
PACKAGES = ("bot", "games", "storage", "faketg")


def _named() -> tuple[set[str], set[str]]:
    """The files (``runtime.py``, ``views/``) and the dotted names (``Presenter.want_dm``) in
    backquotes."""
    quoted = set(re.findall(r"`([^`\s(]+)", DOC.read_text()))
    files = {name for name in quoted if name.endswith((".py", "/"))}
    dotted = {name for name in quoted - files if re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", name)}
    return files, dotted


def _find(path: str) -> bool:
    return any((ROOT / package / path).exists() for package in PACKAGES) or (ROOT / path).exists()


def _resolve(dotted: str) -> bool:
    """``module.attr...`` or ``Class.attr...`` (a class found in any bot/ module by its name)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # a module of bot/'s by its path: handlers.table.act
        if (ROOT / "bot" / Path(*parts[:cut])).with_suffix(".py").exists():
            head, rest = ".".join(parts[:cut]), parts[cut:]
            return _has(importlib.import_module(f"bot.{head}"), rest)
    head, *rest = parts
    candidates = []
    for module in sorted(ROOT.glob("bot/**/*.py")):
        name = ".".join(module.relative_to(ROOT).with_suffix("").parts)
        if module.stem == head:
            candidates.append(importlib.import_module(name))
        else:
            loaded = importlib.import_module(name)
            if hasattr(loaded, head):
                candidates.append(getattr(loaded, head))
    return any(_has(found, rest) for found in candidates)


def _has(found: object, attrs: list[str]) -> bool:
    for attr in attrs:
        fields = getattr(found, "__dataclass_fields__", {})  # (a field without a default)
        found = fields[attr] if attr in fields else getattr(found, attr, None)
        if found is None:
            return False
    return True


def test_every_file_the_architecture_names_exists():
    files, _ = _named()
    assert files, "the page names files"
    assert [name for name in sorted(files) if not _find(name)] == []


def test_every_module_class_and_function_it_names_exists():
    _, dotted = _named()
    assert len(dotted) > 20, "the page follows a press through named functions"
    assert [name for name in sorted(dotted) if not _resolve(name)] == []
