"""Settings: built by an entry point and passed down (no settings in force anywhere), constants
replaced with validation, and the site's config files for authors."""

import ast
from dataclasses import asdict, fields
from pathlib import Path

import pytest

from sitebuild.config import SiteSettings, load_site_settings
from specmodel import Constants, Settings, SpecModelError, evaluate
from specmodel.records import validate

ROOT = Path(__file__).resolve().parents[1]


def test_every_declared_constant_can_be_set_and_defaults_to_its_declaration():
    source = (ROOT / "specmodel" / "model" / "constants.py").read_text()
    declared = [n.targets[0].id for n in ast.parse(source).body if isinstance(n, ast.Assign)]
    assert [f.name for f in fields(Constants)] == declared
    import specmodel.model.constants as c

    assert asdict(Constants()) == {name: getattr(c, name) for name in declared}


def test_the_default_deployment_is_the_articles():
    d = Settings().deployment
    assert (d.hardware, d.target, d.draft, d.tensor_parallel) == ("h100-sxm", "qwen3-8b", "qwen3-0.6b", None)
    assert SiteSettings().deployment.big_draft == "qwen3-1.7b"  # the article's, not the model's
    assert "big_draft" not in asdict(Settings().deployment)


def test_with_constants_gives_new_settings_and_leaves_the_old_ones():
    base = Settings()
    slower = base.with_constants(MEMORY_EFFICIENCY=0.4)
    assert slower.constants.MEMORY_EFFICIENCY == 0.4 and base.constants.MEMORY_EFFICIENCY == 0.8
    assert float(evaluate(settings=slower).spec_tokens_per_s) < float(evaluate(settings=base).spec_tokens_per_s)
    assert float(evaluate().spec_tokens_per_s) == float(evaluate(settings=base).spec_tokens_per_s)


def test_with_constants_rejects_bad_constants_in_one_line():
    with pytest.raises(SpecModelError, match="unknown setting 'NOPE'; allowed: MEMORY_EFFICIENCY"):
        Settings().with_constants(NOPE=1)
    with pytest.raises(SpecModelError, match="MEMORY_EFFICIENCY") as info:
        Settings().with_constants(MEMORY_EFFICIENCY=1.5)
    assert "\n" not in str(info.value)


def test_a_deployment_switches_the_defaults():
    settings = validate(
        Settings, {"deployment": {"hardware": "h200", "target": "llama-3.1-8b", "draft": "llama-3.2-1b"}}
    )
    assert float(evaluate(settings=settings).speedup) == float(
        evaluate(drafter="llama-3.2-1b", hardware="h200", target="llama-3.1-8b").speedup
    )


def test_the_site_settings_are_the_models_with_the_articles_second_draft():
    site = validate(SiteSettings, {"deployment": {"target": "llama-3.1-8b", "draft": "llama-3.2-1b",
                                                       "big_draft": "llama-3.2-3b"}})  # fmt: skip
    assert isinstance(site, Settings)
    assert float(evaluate(settings=site).speedup) == float(
        evaluate(target="llama-3.1-8b", drafter="llama-3.2-1b").speedup
    )


@pytest.mark.parametrize("suffix", [".toml", ".yaml"])
def test_config_files_in_toml_and_yaml(tmp_path, suffix):
    text = {
        ".toml": '[deployment]\nhardware = "h200"\n[constants]\nGENERATED_TOKENS = 512\n',
        ".yaml": "deployment:\n  hardware: h200\nconstants:\n  GENERATED_TOKENS: 512\n",
    }[suffix]
    path = tmp_path / f"c{suffix}"
    path.write_text(text)
    settings = load_site_settings(path)
    assert settings.deployment.hardware == "h200" and settings.constants.GENERATED_TOKENS == 512
    assert settings.deployment.target == "qwen3-8b" and settings.constants.MEMORY_EFFICIENCY == 0.8


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[deployment]\nhardware = "h100"\n', "unknown hardware 'h100'; allowed: h100-sxm, h200, b200"),
        ('[deployment]\ntarget = "qwen3-8b"\ndraft = "llama-3.2-1b"\n', "must share the target's vocabulary"),
        ('[deployment]\ndraft = "ngram"\n', "drafter 'ngram' cannot draft for qwen3-8b"),
        ('[deployment]\nbig_draft = "eagle"\n', "drafter 'eagle' cannot draft for qwen3-8b"),
        ("[constants]\nMEMORY_EFF = 0.5\n", "unknown setting 'constants.MEMORY_EFF'; allowed: MEMORY_EFFICIENCY"),
        ("[deployment]\nbig = 1\n", "unknown setting 'deployment.big'; allowed: hardware, target, draft"),
        ("[constants]\nMEMORY_EFFICIENCY = 2\n", "constants.MEMORY_EFFICIENCY"),
        ('[constants]\nGENERATED_TOKENS = "many"\n', "constants.GENERATED_TOKENS"),
        ('[gpu]\nname = "x"\n', "unknown setting 'gpu'; allowed: constants, deployment"),
        ("[deployment\n", "is not valid TOML"),
    ],
)
def test_bad_config_is_one_clear_error(tmp_path, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SpecModelError) as info:
        load_site_settings(path)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_config_file_must_exist_and_have_a_known_format(tmp_path):
    with pytest.raises(SpecModelError, match="no such file"):
        load_site_settings(tmp_path / "missing.toml")
    (tmp_path / "c.json").write_text("{}")
    with pytest.raises(SpecModelError, match="allowed: .toml, .yaml, .yml"):
        load_site_settings(tmp_path / "c.json")
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(SpecModelError, match="must be a table of settings"):
        load_site_settings(tmp_path / "list.yaml")
