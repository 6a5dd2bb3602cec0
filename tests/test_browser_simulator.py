"""The simulator at the top of the article, driven in headless Chromium and checked
against specmodel computed here."""

from __future__ import annotations

import random
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from sitebuild.config import SiteSettings
from sitebuild.simulator.data import READOUT_AXES, best_gamma_text, default_text
from sitebuild.simulator.data import axes as simulator_axes
from sitebuild.simulator.log import expected_counters
from specmodel import evaluate
from specmodel.formatting import verdict
from specmodel.readouts import BY_KEY, readout_arrays
from specmodel.schedule import OFF, gamma_schedule, vllm_schedule_json
from specmodel.vllm.counters import SpecDecodeCounters
from specmodel.vllm.log_line import format_log_message
from tests.simulator_page import READY, control_value, set_controls

pytestmark = pytest.mark.browser

NAMES = tuple(simulator_axes(SiteSettings()))


def axes():
    return simulator_axes(SiteSettings())


DEFAULT = {
    "concurrency": 1,
    "context": 2048,
    "gamma": 4,
    "drafter": "qwen3-0.6b",
    "acceptance": "falling",
    "alpha": 0.75,
    "engine": "ideal",
}


@pytest.fixture
def sim(browser, site_server):
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    errors, foreign = [], []
    host = urlsplit(site_server).netloc
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: urlsplit(r.url).netloc not in ("", host) and foreign.append(r.url))
    page.goto(site_server, wait_until="load")
    page.wait_for_selector(READY, timeout=20_000)
    yield page
    assert errors == [], errors
    assert foreign == [], foreign
    context.close()


def readouts(page) -> dict[str, str]:
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('[data-simulator] [data-readout]')]
        .map(e => [e.dataset.readout, e.textContent]))""")


def model_text(setting: dict) -> dict[str, str]:
    arrays = readout_arrays(evaluate(**setting))
    return {key: BY_KEY[key].format(float(arrays[key])) for key in READOUT_AXES}


def shown_number(text: str) -> float:
    number = text.split()[0].rstrip("x%").replace(",", "")
    return float(number)


def assert_matches_model(page, setting: dict) -> None:
    shown = readouts(page)
    expected = model_text(setting)
    arrays = readout_arrays(evaluate(**setting))
    assert set(shown) == set(READOUT_AXES)
    for key, text in shown.items():
        assert text.strip() and "NaN" not in text and "Infinity" not in text, (key, text)
        value = float(arrays[key]) * (100 if BY_KEY[key].style == "percent" else 1)
        assert np.isfinite(value)
        decimals = BY_KEY[key].decimals
        assert abs(shown_number(text) - value) <= 0.5 * 10**-decimals + 1e-9, (setting, key, text, value)
        assert text == expected[key], (setting, key)


def ladder(page) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('[data-ladder] .specsim__value')].map(e => e.textContent)"
    )


def test_defaults_read_the_models_speedup(sim):
    text = readouts(sim)["speedup"]
    assert text == BY_KEY["speedup"].format(float(evaluate().speedup))
    # The article quotes 1.94x at the defaults (calibration tolerance 3%).
    assert shown_number(text) == pytest.approx(1.94, rel=0.03)
    assert_matches_model(sim, DEFAULT)


def test_concurrency_64_changes_the_speedup_to_the_models(sim):
    set_controls(sim, {"concurrency": 64})
    text = readouts(sim)["speedup"]
    assert text == BY_KEY["speedup"].format(float(evaluate(concurrency=64).speedup))
    assert shown_number(text) == pytest.approx(0.88, rel=0.03)
    assert "is-loss" in sim.get_attribute("[data-simulator]", "class")
    assert "loss" in sim.text_content("[data-verdict]")


def test_ngram_ladder_never_loses_at_2048(sim):
    sim.check("[name=drafter][value=ngram]")
    sim.wait_for_selector(READY)
    rungs = ladder(sim)
    assert len(rungs) == len(axes()["concurrency"])
    assert all(shown_number(r) >= 1.0 for r in rungs), rungs
    assert sim.locator("[data-ladder] .is-loss").count() == 0


def test_ladder_highlights_the_current_concurrency_and_marks_losses(sim):
    set_controls(sim, {"concurrency": 256})
    current = sim.locator("[data-ladder] .is-current")
    assert current.count() == 1 and current.get_attribute("data-concurrency") == "256"
    speedups = evaluate(concurrency=np.array(axes()["concurrency"])).speedup
    losses = [r.get_attribute("data-concurrency") for r in sim.locator("[data-ladder] .is-loss").all()]
    assert losses == [str(b) for b, s in zip(axes()["concurrency"], speedups) if verdict(float(s)) == "slower"]
    assert ladder(sim) == [BY_KEY["speedup"].format(float(s)) for s in speedups]


def test_200_random_settings_match_the_model(sim):
    rng = random.Random(20261130)
    for _ in range(200):
        setting = {name: rng.choice(values) for name, values in axes().items()}
        set_controls(sim, setting)
        assert_matches_model(sim, setting)


def test_engine_log_is_vllms_line_for_the_scenario(sim):
    rng = random.Random(7)
    for _ in range(20):
        setting = {name: rng.choice(values) for name, values in axes().items()}
        set_controls(sim, setting)
        ev = evaluate(**setting)
        c = expected_counters(ev, setting["concurrency"], setting["gamma"])
        counters = SpecDecodeCounters(
            float(c["num_drafts"]),
            float(c["num_draft_tokens"]),
            float(c["num_accepted_tokens"]),
            tuple(float(x) for x in np.ravel(c["accepted_per_position"])),
        )
        assert sim.text_content("[data-log]") == format_log_message(counters, float(c["elapsed"]))


def test_token_row_is_one_iteration(sim):
    for gamma in (1, 4, 10):
        set_controls(sim, {"gamma": gamma})
        for _ in range(15):
            sim.click("[data-resample]")
            chips = sim.locator("[data-tokens] .specsim__token")
            classes = [c.split()[-1] for c in chips.evaluate_all("els => els.map(e => e.className)")]
            accepted = int(sim.get_attribute("[data-tokens]", "data-accepted"))
            assert len(classes) == gamma + 1 and classes[-1] == "is-emitted"
            assert classes[:accepted] == ["is-accepted"] * accepted
            if accepted < gamma:
                assert classes[accepted] == "is-rejected"
                assert classes[accepted + 1 : gamma] == ["is-skipped"] * (gamma - accepted - 1)


def test_url_keeps_the_setting_and_a_reload_restores_it(sim):
    setting = {
        "concurrency": 64,
        "context": 8192,
        "gamma": 2,
        "drafter": "ngram",
        "acceptance": "same",
        "alpha": 0.8,
        "engine": "vllm",
    }
    set_controls(sim, setting)
    query = parse_qs(urlsplit(sim.url).query)
    assert {k: v[0] for k, v in query.items()} == {k: str(v) for k, v in setting.items()}
    shown = readouts(sim)
    sim.reload(wait_until="load")
    sim.wait_for_selector(READY)
    assert readouts(sim) == shown
    assert control_value(sim, "context") == "8192"
    assert sim.get_attribute("[name=context]", "aria-valuetext") == "8,192 tokens"
    assert sim.is_checked("[name=acceptance][value=same]")
    assert_matches_model(sim, setting)


def test_opening_a_link_starts_there(browser, site_server):
    page = browser.new_page()
    page.goto(site_server + "?concurrency=64&context=8192&gamma=2&drafter=ngram&acceptance=same&alpha=0.8")
    page.wait_for_selector(READY)
    setting = {"concurrency": 64, "context": 8192, "gamma": 2, "drafter": "ngram", "acceptance": "same", "alpha": 0.8}
    assert_matches_model(page, setting)
    page.close()


def test_keyboard_reaches_and_changes_every_control(sim):
    expected = dict(DEFAULT)
    sim.focus("[name=concurrency]")
    steps = [
        ("concurrency", "ArrowRight", 2),
        ("context", "ArrowRight", 4096),
        ("gamma", "ArrowRight", 5),
        ("drafter", "ArrowDown", "qwen3-1.7b"),
        ("acceptance", "ArrowDown", "same"),
        ("alpha", "ArrowRight", 0.8),
        ("engine", "ArrowDown", "vllm"),
    ]
    for i, (name, key, value) in enumerate(steps):
        if i:
            sim.keyboard.press("Tab")
        focused = sim.evaluate("() => document.activeElement.name")
        assert focused == name
        sim.keyboard.press(key)
        sim.wait_for_selector(READY)  # an engine's numbers may still be loading
        expected[name] = value
        assert_matches_model(sim, expected)


def test_without_javascript_the_defaults_are_there(browser, site_server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_server)
    shown = readouts(page)
    text = default_text(SiteSettings())
    assert shown == {k: text[k] for k in READOUT_AXES}
    assert page.text_content("[data-log]") == text["log"]
    context.close()


def _unfit_rungs(page) -> list[str]:
    return [r.get_attribute("data-concurrency") for r in page.locator("[data-ladder] .is-unfit").all()]


def test_ladder_marks_the_rungs_that_do_not_fit_in_memory(sim):
    ladder_b = np.array(axes()["concurrency"])
    for drafter, context in (("qwen3-0.6b", "2048"), ("ngram", "2048"), ("eagle", "8192"), ("qwen3-1.7b", "16384")):
        sim.check(f'[name=drafter][value="{drafter}"]')
        sim.wait_for_selector(READY)
        set_controls(sim, {"context": int(context)})
        fits = evaluate(concurrency=ladder_b, context=int(context), drafter=drafter).fits
        assert _unfit_rungs(sim) == [str(b) for b, f in zip(ladder_b, fits) if not f], (drafter, context)
    sim.check('[name=drafter][value="qwen3-0.6b"]')
    sim.wait_for_selector(READY)
    set_controls(sim, {"context": 2048})
    assert _unfit_rungs(sim)[0] == "128"  # 64 sequences fit with the draft model, 128 do not


def test_fits_readout_follows_the_setting(sim):
    assert sim.text_content("[data-fits]") == "yes"
    set_controls(sim, {"concurrency": 128})
    assert sim.text_content("[data-fits]").startswith("no")
    sim.check('[name=drafter][value="eagle-32k"]')  # a head's one-layer cache leaves room for 128
    sim.wait_for_selector(READY)
    assert sim.text_content("[data-fits]") == "yes"
    assert_matches_model(sim, {**DEFAULT, "concurrency": 128, "drafter": "eagle-32k"})


def test_a_head_keeps_its_speedup_at_64_sequences(sim):
    set_controls(sim, {"concurrency": 64})
    sim.check("[name=drafter][value=eagle]")
    sim.wait_for_selector(READY)
    assert shown_number(readouts(sim)["speedup"]) > 1.0
    assert "is-loss" not in sim.get_attribute("[data-simulator]", "class")


def test_a_link_to_a_setting_shows_what_the_command_line_prints_for_it(browser, site_server):
    """The simulator at a URL's setting and `specmodel point` with the same options agree."""
    import contextlib
    import io
    import json

    from specmodel.cli import main as cli_main

    rng = random.Random(19)
    page = browser.new_page()
    for _ in range(12):
        setting = {name: rng.choice(values) for name, values in axes().items()}
        page.goto(site_server + "?" + "&".join(f"{k}={v}" for k, v in setting.items()))
        page.wait_for_selector(READY)
        out = io.StringIO()
        argv = ["point", "--json", *(x for k, v in setting.items() for x in (f"--{k.replace('_', '-')}", str(v)))]
        with contextlib.redirect_stdout(out):
            assert cli_main(argv) in (0, None)
        cli = json.loads(out.getvalue())
        shown = readouts(page)
        for key in ("speedup", "spec_tokens_per_s", "draft_share", "verify_idle", "mean_acceptance_length"):
            assert shown[key] == BY_KEY[key].format(float(cli[key])), (setting, key)
    page.close()


# --- the best gamma at every load, and vLLM's schedule of it -----------------------------------

#: The controls a schedule depends on (it sweeps the concurrency and gamma itself).
SCHEDULE_FIELDS = ("context", "drafter", "acceptance", "alpha", "engine")


def model_schedule(setting: dict) -> str:
    """vLLM's schedule for the setting's drafter, acceptance, engine and context, as the model gives it."""
    return vllm_schedule_json(gamma_schedule(**{k: setting[k] for k in SCHEDULE_FIELDS}).ranges)


def page_schedules(page) -> list[str]:
    """The schedules the article prints (its JSON code blocks outside the simulator), in order."""
    return page.evaluate("""() => [...document.querySelectorAll('pre code')]
        .filter(e => !e.closest('[data-simulator]'))
        .map(e => e.textContent.trim())
        .filter(t => t.includes('num_speculative_tokens_per_batch_size'))""")


def test_the_printed_schedule_is_the_simulators_and_the_models(sim):
    """The article's two schedules (ideal roofline, vLLM profile) are what the simulator shows at the
    defaults under each engine, and both are the model's; the simulator follows the drafter,
    acceptance and context too."""
    printed = page_schedules(sim)
    assert len(printed) == 2, printed
    for setting, text in ((DEFAULT, printed[0]), ({**DEFAULT, "engine": "vllm"}, printed[1])):
        set_controls(sim, setting)
        assert sim.text_content("[data-schedule]") == text == model_schedule(setting), setting
    others = (
        {**DEFAULT, "drafter": "eagle", "context": 8192},
        {**DEFAULT, "drafter": "ngram", "acceptance": "same", "alpha": 0.6, "context": 512, "engine": "vllm"},
    )
    for setting in others:
        set_controls(sim, setting)
        assert sim.text_content("[data-schedule]") == model_schedule(setting), setting


def test_the_best_gamma_readout_is_the_schedules_at_its_load(sim):
    settings = [DEFAULT, *({**DEFAULT, "concurrency": b} for b in (16, 64, 128, 1024))]
    settings += [{**DEFAULT, "engine": "vllm", "concurrency": 32}, {**DEFAULT, "drafter": "ngram", "concurrency": 256}]
    for setting in settings:
        set_controls(sim, setting)
        schedule = gamma_schedule(**{k: setting[k] for k in SCHEDULE_FIELDS})
        b = setting["concurrency"]
        gamma = int(schedule.gamma[b - 1]) if b <= schedule.batch_sizes[-1] else OFF
        speedup = BY_KEY["speedup"].format(float(evaluate(**{**setting, "gamma": max(gamma, 1)}).speedup))
        expected = best_gamma_text(gamma, speedup, bool(evaluate(**setting).fits))
        assert sim.text_content("[data-best-gamma]") == expected, setting
    set_controls(sim, DEFAULT)
    assert sim.text_content("[data-best-gamma]").startswith(f"{int(gamma_schedule().gamma[0])} (")


def test_without_javascript_the_schedule_is_there(browser, site_server):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_server)
    text = default_text(SiteSettings())
    assert page.text_content("[data-schedule]") == text["schedule"] == model_schedule(DEFAULT)
    assert page.text_content("[data-best-gamma]") == text["best_gamma"]
    context.close()
