"""Write docs/notebook.ipynb (the notebook page's source) from the cells below.

The notebook is committed without outputs; mkdocs-jupyter executes it at every build and a
failing cell fails the build. Run this script after editing the cells.
"""

from pathlib import Path

import nbformat as nbf

md, code = nbf.v4.new_markdown_cell, nbf.v4.new_code_cell

CELLS = [
    md(
        "# The model's API in a notebook\n\n"
        "This page is a Jupyter notebook that the site executes when it is built, so every number on it "
        "is the model's current output. It walks through `specmodel`'s public API: one scenario, a grid, "
        "measured acceptance, the calibration, and a figure."
    ),
    md(
        "## One scenario\n\nA `Scenario` is one record of everything that defines a scenario (the "
        "article's defaults when omitted); `evaluate` checks its fields and returns an `Evaluation` whose "
        "fields are numpy arrays in SI units. `point_readouts` converts them into the units the article and "
        "the CLI print."
    ),
    code(
        "from specmodel import Scenario, evaluate\n"
        "from specmodel.readouts import point_readouts\n\n"
        "scenario = Scenario()  # 1 sequence, context 2048, gamma 4, the deployment's draft, falling, alpha 0.75\n"
        "ev = evaluate(scenario)\n"
        "shown = ('speedup', 'spec_tokens_per_s', 'base_tokens_per_s', 'draft_share', 'verify_idle')\n"
        "{k: round(v, 3) for k, v in point_readouts(ev).items() if k in shown}"
    ),
    md(
        "## Many scenarios at once\n\n`evaluate` also takes the scenario's fields as arrays, which broadcast like "
        "numpy arrays: a column of concurrencies against a row of drafters gives an 11 x 3 grid in one call."
    ),
    code(
        "import numpy as np\nimport pandas as pd\n\n"
        "concurrency = 2 ** np.arange(11)\n"
        "drafters = np.array(['qwen3-0.6b', 'qwen3-1.7b', 'ngram'])\n"
        "ladder = evaluate(concurrency=concurrency[:, None], drafter=drafters[None, :])\n"
        "pd.DataFrame(ladder.speedup.round(2), index=pd.Index(concurrency, name='sequences'), columns=drafters)"
    ),
    md(
        "`sweep` evaluates a Cartesian grid and returns one DataFrame row per scenario. Here: the best gamma for "
        "each concurrency with the 0.6B draft, as the article's section 5 reads it: under its ideal engine, on one "
        "GPU (both fixed here; `sweep` compares both engines and 1 to 8 GPUs unless told). A speedup counts as a "
        "gain only above the 3% margin (`specmodel.formatting.verdict`), and only where the scenario fits in memory."
    ),
    code(
        "from specmodel.formatting import verdict\n"
        "from specmodel.grid import sweep\n\n"
        "grid = sweep(concurrency=concurrency, context=[2048], gamma=range(1, 11), drafter=['qwen3-0.6b'],\n"
        "             acceptance=['falling'], alpha=[0.75], engine='ideal', tensor_parallel=1)\n"
        "columns = ['concurrency', 'gamma', 'speedup', 'fits']\n"
        "best = grid.loc[grid.groupby('concurrency')['speedup'].idxmax(), columns]\n"
        "best['verdict'] = [verdict(s) for s in best['speedup']]\n"
        "best.assign(worth_it=(best['verdict'] == 'faster') & best['fits']).reset_index(drop=True)"
    ),
    md(
        "The article states the same result as a claim: the same code decides its outcome when the site is "
        "built (`sitebuild.claims`), and the page's Markdown words each outcome:"
    ),
    code(
        "from sitebuild.claims import article_claims\n"
        "from sitebuild.claims.prose import sentences\n"
        "from sitebuild.config import SiteSettings\n\n"
        "said = sentences(article_claims(SiteSettings()))  # worded as the site's pages word them\n"
        "print(said['gamma_by_concurrency'])"
    ),
    md(
        "## Measured acceptance\n\nvLLM reports the share of drafts in which each position was accepted. "
        "`evaluate_per_position` takes those shares directly instead of a profile."
    ),
    code(
        "from specmodel import evaluate_per_position\n\n"
        "measured = [0.71, 0.44, 0.22, 0.09]  # per-position acceptance from a log line\n"
        "for g in range(1, 5):\n"
        "    s = evaluate_per_position(measured[:g], concurrency=[1, 8, 64]).speedup\n"
        "    print(f'gamma {g}:', ', '.join(f'{x:.2f}x' for x in s))"
    ),
    md("## Calibration\n\nThe model against every figure the article quotes."),
    code(
        "from specmodel.calibration import compare, load_table\n\n"
        "table = compare(load_table())  # the article's table, shipped with the package\n"
        "within = sum(row.within for row in table)\n"
        "worst = max(abs(row.relative_error) for row in table)\n"
        "print(f'{within} of {len(table)} rows within tolerance; largest relative error {worst:.1%}')"
    ),
    md(
        "## A figure\n\nThe ladder on the three cards of the page *Other cards*, after that page's claim "
        "about them. `sitebuild.notebook.show` embeds a Plotly figure the way the site does, drawn by its single "
        "copy of plotly.js."
    ),
    code(
        "import plotly.graph_objects as go\n\n"
        "from sitebuild import theme\n"
        "from sitebuild.figures.cards import COMPARED_HARDWARE\n"
        "from sitebuild.notebook import show\n"
        "from specmodel.formatting import plural\n\n"
        "fig = theme.base_figure()\n"
        "for hardware, color in zip(COMPARED_HARDWARE, theme.SEQUENCE):\n"
        "    s = evaluate(concurrency=concurrency, hardware=hardware).speedup\n"
        "    name = hardware.upper()  # short names: the legend fits a phone\n"
        "    fig.add_trace(go.Scatter(x=concurrency, y=s, name=name, mode='lines+markers', line={'color': color},\n"
        "                             hovertext=[plural(int(b), 'sequence') for b in concurrency],\n"
        "                             hovertemplate='%{hovertext}: %{y:.2f}x<extra>' + name + '</extra>'))\n"
        "theme.reference_line(fig, 1.0, 1, 1024)\n"
        "fig.update_layout(xaxis={**theme.log2_axis(concurrency), 'title': 'concurrent sequences'},\n"
        "                  yaxis={'title': 'speedup (Qwen3-0.6B draft)', 'ticksuffix': 'x', 'range': [0, 2.5]})\n"
        "print(said['cards_ratio'], said['cards_ridge'])\n"
        "show(fig, 'notebook-hardware', 'Speedup against concurrency on three accelerators.')"
    ),
]


def main() -> None:
    nb = nbf.v4.new_notebook()
    nb.cells = CELLS
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:02d}"  # fixed ids: regenerating gives the same file
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path = Path(__file__).resolve().parents[1] / "docs" / "notebook.ipynb"
    nbf.write(nb, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
