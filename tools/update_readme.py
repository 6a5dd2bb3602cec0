"""Regenerate the generated blocks of README.md (`make readme`): the module map, the modelling
constants and the calibration table, each between its <!-- name:start --> and <!-- name:end -->
markers."""

import re
import sys
from collections.abc import Callable
from pathlib import Path

from sitebuild.config import SiteSettings
from sitebuild.tables import calibration, constants, module_map

ROOT = Path(__file__).resolve().parents[1]


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
