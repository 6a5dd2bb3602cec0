"""Regenerate the generated blocks of README.md (`make readme`): the module map, the modelling
constants and the calibration table, each between its <!-- name:start --> and <!-- name:end -->
markers."""

import ast
import re
import sys
from collections.abc import Callable
from pathlib import Path

from sitebuild.config import SiteSettings
from sitebuild.tables import calibration, constants

ROOT = Path(__file__).resolve().parents[1]


def module_docstring_summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line, with Sphinx roles removed."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return re.sub(r":(?:mod|func|class|data|meth|attr):`~?([^`]+)`", r"`\1`", first).replace("``", "`")


def module_map(root: Path) -> str:
    """Every module of the package and of the site builder with the first paragraph of its
    docstring: the README's map of where things live."""
    out = ["| module | what it holds |", "| --- | --- |"]
    for package in ("specmodel", "sitebuild"):
        for path in sorted((root / package).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            out.append(f"| `{name}` | {module_docstring_summary(path).replace('|', '/')} |")
    return "\n".join(out)


def blocks() -> dict[str, str]:
    """Marker name -> the Markdown that belongs between its markers."""
    return {"constants": constants(SiteSettings()), "calibration": calibration(), "modules": module_map(ROOT)}


def _between(table: str) -> Callable[[re.Match[str]], str]:
    """A replacement that puts ``table`` between a block's two markers."""

    def replace(match: re.Match[str]) -> str:
        return f"{match.group(1)}\n{table}\n{match.group(2)}"

    return replace


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    for name, table in blocks().items():
        pattern = re.compile(rf"(<!-- {name}:start -->).*?(<!-- {name}:end -->)", re.S)
        if not pattern.search(text):
            print(f"README.md has no <!-- {name}:start --> ... <!-- {name}:end --> block", file=sys.stderr)
            return 2
        text = pattern.sub(_between(table), text)
    readme.write_text(text, encoding="utf-8")
    print(f"updated {readme.name}: {', '.join(blocks())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
