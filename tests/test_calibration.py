"""Anchor tests: every figure the article quotes (specmodel/data/calibration.csv, a copy of
shared/brief/calibration.csv, shipped with the package), reproduced by one model with one set of constants."""

import re

import pytest

from specmodel.calibration import compare, load_table, markdown_table

TABLE = load_table()
COMPARED = compare(TABLE)


def _id(row) -> str:
    return f"B{row.concurrency}-T{row.context}-g{row.gamma}-{row.drafter}-{row.acceptance}-a{row.alpha}-{row.metric}"


@pytest.mark.parametrize("row", COMPARED, ids=[_id(r) for r in COMPARED])
def test_row_within_tolerance(row):
    # Source: the article's quoted figures (shared/brief/article.md, calibration.csv).
    if row.tolerance == 0:
        assert row.model == pytest.approx(row.value, abs=1e-9)
    elif row.kind == "relative":
        assert row.model == pytest.approx(row.value, rel=row.tolerance)
    else:
        assert row.model == pytest.approx(row.value, abs=row.tolerance)


def test_table_has_every_row_of_the_brief():
    assert len(TABLE) == 34
    assert {row.kind for row in TABLE} <= {"relative", "absolute"}


@pytest.mark.parametrize("name", ["calibration", "constants"])
def test_readme_generated_blocks_are_current(root, name):
    from sitebuild.config import SiteSettings
    from sitebuild.tables import constants

    expected = {"calibration": markdown_table(COMPARED), "constants": constants(SiteSettings())}[name]
    text = (root / "README.md").read_text(encoding="utf-8")
    block = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert block, f"README.md lacks the generated {name} block"
    assert block.group(1).strip() == expected.strip(), "run `make readme` to regenerate it"
