"""The article's claims: every qualitative statement is a predicate over the model
(sitebuild.claims), worded per outcome by the page's Markdown (sitebuild.claims.prose). The
site builds under several configurations with a true wording for every claim, a claim whose
outcome has no wording stops the build naming it, and each claim's outcome agrees with the model
computed here."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from site_builds import ROOT, build_env, mkdocs_build, project_copy

from sitebuild.build import outputs
from sitebuild.claims import ClaimError, article_claims
from sitebuild.claims.prose import BLOCK, sentence, sentences, worded_page
from sitebuild.config import ArticleDeployment, SiteSettings
from sitebuild.deployment import resolved
from specmodel import evaluate, formatting
from specmodel.model.settings import Constants

LADDER = np.array([2**i for i in range(11)])

#: The configurations the issue names: the default; FALLING_RATIO = 1.0 (the two acceptance
#: profiles coincide and the larger draft overtakes the smaller); another card; and a deployment
#: that one card cannot hold (a 32B target on L40S, split over two GPUs).
CONFIGS = {
    "default": SiteSettings(),
    "falling-ratio-1": SiteSettings(constants=Constants(FALLING_RATIO=1.0)),
    "a100": SiteSettings(deployment=ArticleDeployment(hardware="a100-80gb")),
    "two-gpus": SiteSettings(deployment=ArticleDeployment(hardware="l40s", target="qwen3-32b")),
}


@pytest.fixture(scope="module", params=list(CONFIGS))
def config(request) -> tuple[str, SiteSettings, dict]:
    settings = resolved(CONFIGS[request.param])
    return request.param, settings, article_claims(settings)


def test_every_claim_has_a_wording_for_its_outcome_in_every_configuration(config):
    name, settings, said = config
    assert said, name
    for claim, text in sentences(said).items():
        assert "{" not in text and "nan" not in text.lower().split(), (name, claim, text)


def test_the_two_gpu_deployment_runs_on_two_gpus():
    settings = resolved(CONFIGS["two-gpus"])
    assert settings.deployment.tensor_parallel == 2
    assert "split by tensor parallelism over two" in sentences(article_claims(settings))["deployment"]
    assert resolved(SiteSettings()).deployment.tensor_parallel == 1


def _verdict(speedup) -> str:
    return formatting.verdict(float(speedup))


def test_outcomes_agree_with_the_model(config):
    """Each claim's outcome is what the model computed here says, not a typed verdict."""
    name, s, said = config
    assert said["rung_b64"].outcome.split(":")[0] == _verdict(evaluate(concurrency=64, settings=s).speedup), name
    assert said["counters_b64"].outcomes["outcome"] == _verdict(evaluate(concurrency=64, settings=s).speedup), name
    big = evaluate(drafter=s.deployment.big_draft, alpha=0.95, settings=s).speedup
    small = evaluate(settings=s).speedup
    texts = formatting.times(float(big)), formatting.times(float(small))
    expected = "level" if texts[0] == texts[1] else "short" if float(big) < float(small) else "ahead"
    assert said["big_draft"].outcomes["outcome"] == expected, name
    same = evaluate(acceptance="same", settings=s).mean_acceptance_length
    falling = evaluate(settings=s).mean_acceptance_length
    assert (said["same_profile"].outcome == "equal") == (f"{float(same):.2f}" == f"{float(falling):.2f}"), name
    stop = [b for b, x in zip(LADDER, evaluate(concurrency=LADDER, settings=s).speedup) if _verdict(x) != "faster"]
    if stop and stop[0] > 1:
        assert said["thesis_turn"].values["stop"].text == f"{stop[0]:,}", name


def test_falling_ratio_1_words_the_bigger_draft_as_ahead_and_the_profiles_as_one():
    """The reader's report: with FALLING_RATIO = 1 the page said the 1.7B draft "reaches 2.38x,
    still short of Qwen3-0.6B" (at 2.26x) and "flatters by 0%"."""
    said = article_claims(resolved(CONFIGS["falling-ratio-1"]))
    text = sentences(said)
    assert said["big_draft"].outcomes["outcome"] == "ahead" and "short of" not in text["big_draft"]
    assert said["same_profile"].outcome == "equal" and "flatters" not in text["same_profile"]


def test_a_claim_without_a_wording_for_its_outcome_names_itself():
    block = "{% when a %} only {x} and {y}"
    with pytest.raises(ClaimError, match=r"claim 'demo'.*outcome is 'b'.*worded outcomes: a.*x=1"):
        sentence("demo", {"outcome": "b"}, {"x": "1"}, block)
    with pytest.raises(ClaimError, match=r"claim 'demo', part 'second'.*'z'.*worded outcomes: y"):
        sentence("demo", {"first": "a", "second": "z"}, {}, "{% when first=a %} one {% when second=y %} two")
    with pytest.raises(ClaimError, match=r"quotes y, not computed"):
        sentence("demo", {"outcome": "a"}, {"x": "1"}, block)
    with pytest.raises(ClaimError, match=r"the page words second, which the claim does not decide"):
        sentence("demo", {"first": "a"}, {}, "{% when first=a %} one {% when second=y %} two")


def test_a_facet_put_in_by_name_prints_only_where_a_branch_puts_it():
    block = """{% when parts=b %} mostly {largest}, at {share}.
    {% when parts=c %} all the same.
    {% when largest=draft_kv %} reading the drafter's cache
    {% when tail=x %}
    {% when end=y %} Then it
      stops."""
    said = {"parts": "b", "largest": "draft_kv", "tail": "x", "end": "y"}
    assert (
        sentence("demo", said, {"share": "45%"}, block) == "mostly reading the drafter's cache, at 45%. Then it stops."
    )
    said["parts"] = "c"
    assert sentence("demo", said, {"share": "45%"}, block) == "all the same. Then it stops."


def test_a_block_left_open_is_refused_not_printed():
    page = "A {% claim demo %}{% when a %} one {% endclaim %} and {% claim demo %}{% when a %} two."
    with pytest.raises(ClaimError, match=r"'\{% claim demo %\}' outside a whole claim block"):
        worded_page(page, lambda name, body: "x")
    assert worded_page(page.replace("two.", "two.{% endclaim %}"), lambda name, body: name) == "A demo and demo"


@pytest.mark.slow
def test_a_configuration_that_makes_a_claim_false_without_a_wording_fails_the_build(tmp_path):
    """If the page had only the default's wording for the bigger draft ("still short of the
    smaller draft"), FALLING_RATIO = 1 would make it false: the site's build stops and names the
    claim, its outcome and its values."""
    project = project_copy(tmp_path / "project")
    index = project / "docs" / "index.md"
    page = index.read_text()
    body = next(m for m in BLOCK.finditer(page) if m.group(1) == "big_draft").group(2)
    assert "{% when ahead %}" in body
    index.write_text(page.replace(body, body[: body.index("{% when ahead %}")] + "\n"))
    config = tmp_path / "ratio.toml"
    config.write_text("[constants]\nFALLING_RATIO = 1.0\n")
    figures = subprocess.run([sys.executable, "build_figures.py", "--config", str(config), "--out",
                              str(project / "docs" / "generated")], cwd=ROOT, capture_output=True, text=True,
                             env=build_env())  # fmt: skip
    assert figures.returncode == 0, figures.stderr
    built = mkdocs_build(project)
    assert built.returncode != 0
    assert "index.md: claim 'big_draft'" in built.stderr and "'ahead'" in built.stderr, built.stderr[-2000:]
    assert "speedup_big_a95=" in built.stderr, built.stderr[-2000:]
    assert not (project / "site" / "index.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_site_builds_under_each_configuration(name):
    files = outputs(CONFIGS[name])
    said = files["claims.json"]
    assert isinstance(said, str) and '"deployment"' in said
    for text in (files["numbers.json"], said):
        assert "NaN" not in text and "Infinity" not in text


def test_a_speedup_within_three_percent_of_1x_is_even_everywhere():
    """The advice's margin is the page's: 1.00x (gamma 1 at 1,024 sequences) is even in the
    prose, the simulator, the figures and the break-even map."""
    from sitebuild import theme
    from sitebuild.figures import ladders
    from sitebuild.figures.common import point_colors
    from specmodel.vllm.advise import MIN_GAIN

    assert MIN_GAIN == formatting.EVEN_MARGIN == 0.03
    assert [formatting.verdict(x) for x in (1.04, 1.03, 1.0, 0.97, 0.96)] == [
        "faster", "even", "even", "even", "slower"
    ]  # fmt: skip
    assert point_colors([1.5, 1.002, 0.9], "#123456") == ["#123456", theme.EVEN, theme.LOSS]
    s = float(evaluate(concurrency=1024, gamma=1).speedup)
    assert formatting.times(s) == "1.00x" and formatting.verdict(s) == "even"
    data = ladders.breakeven_map(SiteSettings())
    even = data[[formatting.verdict(x) == "even" for x in data["speedup"]]]
    assert len(even)
    fig = ladders.draw_breakeven_map(data, SiteSettings().deployment)
    heat = next(t for t in fig.data if t.type == "heatmap" and t.visible)
    shown = {(x, y): t for y, row in zip(heat.y, heat.text) for x, t in zip(heat.x, row)}
    mine = even[even["drafter"] == SiteSettings().deployment.draft]
    assert all(shown[(str(b), str(c))] == "off" for b, c in zip(mine["concurrency"], mine["context"]))


def test_quoted_numbers_are_marked_as_quotations():
    from sitebuild.numbers import article_numbers

    numbers = article_numbers(SiteSettings())
    papers = {k: v for k, v in numbers.items() if k.startswith("paper_")}
    assert papers and all(v.quoted for v in papers.values())
    assert all(re.search(r"arXiv:\d{4}\.\d{5}", v.quoted) for k, v in papers.items() if k != "paper_per_position_cut")
    assert not any(v.quoted for k, v in numbers.items() if not k.startswith("paper_"))


GAMMA_GRID = np.arange(1, 11)
#: Every claim that gives a verdict about one load, the prefix of the best γ it names there and
#: the load (``counters_b64`` names the ideal engine's only: its section is vLLM's own counters).
LOAD_VERDICTS = {"rung_b1": ("b1", 1), "rung_b64": ("b64", 64), "rung_b1024": ("b1024", 1024),
                 "counters_b64": ("c64", 64), "head_b64": ("d64", 64)}  # fmt: skip


def _best(s, engine: str, **scenario) -> tuple[int, float]:
    curve = np.asarray(evaluate(gamma=GAMMA_GRID, engine=engine, settings=s, **scenario).speedup)
    return int(GAMMA_GRID[np.argmax(curve)]), float(curve.max())


@pytest.mark.parametrize("claim", list(LOAD_VERDICTS))
def test_every_verdict_about_a_load_names_the_best_gamma_under_both_engines(config, claim):
    """The sentence names the best γ at its load and its speedup, as the model computed here
    gives them, under the ideal engine and under the profile fitted to vLLM."""
    name, s, said = config
    prefix, load = LOAD_VERDICTS[claim]
    text = sentences({claim: said[claim]})[claim]
    values = said[claim].values
    engines = (("ideal", prefix), ("vllm", f"{prefix}_fitted"))
    for engine, key in engines[:1] if claim == "counters_b64" else engines:
        g, top = _best(s, engine, concurrency=load)
        assert values[f"{key}_best"].text == f"{g}", (name, claim, engine)
        assert values[f"{key}_best_speedup"].text == formatting.times(top), (name, claim, engine)
        gain = formatting.verdict(top) == "faster"
        assert said[claim].outcomes["best" if engine == "ideal" else "fitted_best"] == ("gain" if gain else "off")
    assert values[f"{prefix}_best_speedup"].text in text, (name, claim, text)
    assert f"γ = {values[f'{prefix}_best'].text}" in text or f", {values[f'{prefix}_best'].text}," in text, text


def _first_not_faster(rungs, speedups):
    return next((int(b) for b, x in zip(rungs, speedups) if _verdict(x) != "faster"), None)


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_the_thesis_is_true_under_both_engines(config, engine):
    """Where the article's γ stops gaining, and whether a γ chosen per load still gains on every
    rung that fits, as the model computed here gives them under each engine."""
    name, s, said = config
    thesis = said["thesis_turn"]
    ev = evaluate(concurrency=LADDER, engine=engine, settings=s)
    stop = _first_not_faster(LADDER, ev.speedup)
    key = "stop" if engine == "ideal" else "fitted_stop"
    assert thesis.values[key].text == (f"{stop:,}" if stop else "none"), (name, engine)
    fits = np.asarray(evaluate(concurrency=LADDER, settings=s).fits)
    tops = [_best(s, engine, concurrency=int(b))[1] for b in LADDER[fits]]
    tuned = _first_not_faster(LADDER[fits], tops)
    facet = thesis.outcomes["tuned" if engine == "ideal" else "fitted_tuned"]
    assert facet == ("always" if tuned is None else "none" if tuned == 1 else "stops"), (name, engine, tuned)
    sentence = sentences({"thesis_turn": thesis})["thesis_turn"]
    if facet == "stops":
        assert thesis.values["tuned_stop" if engine == "ideal" else "fitted_tuned_stop"].text in sentence, name


@pytest.mark.parametrize("engine", ["ideal", "vllm"])
def test_the_rules_of_thumb_are_true_under_both_engines(config, engine):
    """Rule 1 quotes each engine's best γ and speedup at one and eight sequences; rule 2 quotes
    only rungs where every drafter it names fits, under each engine."""
    name, s, said = config
    few, many = said["rule_few"], said["rule_many"]
    prefix = "" if engine == "ideal" else "fitted_"
    for load in (1, 8):
        g, top = _best(s, engine, concurrency=load)
        assert few.values[f"{prefix}best_b{load}"].text == f"{g}", (name, engine, load)
        assert few.values[f"{prefix}speedup_b{load}"].text == formatting.times(top), (name, engine, load)
    top_rung = int(many.values["free_top"].value)
    free = evaluate(concurrency=top_rung, drafter=np.array(["ngram", "eagle", "eagle-32k"]), gamma=2, settings=s)
    assert np.all(free.fits), (name, top_rung)
    text = sentences({"rule_many": many})["rule_many"]
    assert "256 sequences" not in text or top_rung >= 256, text


def test_the_serving_numbers_search_every_concurrency(config):
    """The latency section's counts come from every concurrency, not only the ladder's powers
    of two, and name the draft model's best γ for each target."""
    from sitebuild.claims.serving import LOW_TARGET_RUNG, latency_target
    from specmodel.model.serving import best_at_rate

    name, s, said = config
    low = said["latency_low"]
    if low.outcomes["outcome"] == "same":
        return
    target = latency_target(s, LOW_TARGET_RUNG)
    b = np.arange(1, 1025)
    best = (0, -1.0, 0)
    for g in GAMMA_GRID:
        ev = evaluate(concurrency=b, gamma=int(g), settings=s)
        i = best_at_rate(ev.spec_tokens_per_s_per_sequence, ev.spec_tokens_per_s, ev.fits, target)
        total = float(ev.spec_tokens_per_s[i]) if i >= 0 else 0.0
        if total > best[1]:
            best = (int(g), total, int(b[i]) if i >= 0 else 0)
    assert low.values["g_best"].text == f"{best[0]}", name
    assert low.values["b_best"].text == f"{best[2]:,}", name
