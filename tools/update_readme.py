"""Regenerate the calibration table in README.md between its markers (`make readme`)."""

import re
import sys
from pathlib import Path

from specmodel.calibration import compare, load_table, markdown_table

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    table = markdown_table(compare(load_table(ROOT / "tests" / "data" / "calibration.csv")))
    pattern = re.compile(r"(<!-- calibration:start -->).*?(<!-- calibration:end -->)", re.S)
    if not pattern.search(text):
        print("README.md has no <!-- calibration:start --> ... <!-- calibration:end --> block", file=sys.stderr)
        return 2
    readme.write_text(pattern.sub(lambda m: f"{m.group(1)}\n{table}\n{m.group(2)}", text), encoding="utf-8")
    print(f"updated {readme.name}: {table.count(chr(10)) - 1} calibration rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
