"""LM101 on LightningCLI YAML configs (lightmigrate/engine/yaml_config.py)."""

import os

import yaml

from lightmigrate.engine import discover, run
from lightmigrate.engine.model import Mode
from lightmigrate.engine.yaml_config import has_trainer_section, parse_scalar, transform_yaml
from lightmigrate.output.findings import Kind
from lightmigrate.catalog.trainer_args import NOT_LITERAL
from lightmigrate.rules import ALL_RULES, select_rules

CONFIG = """\
# LightningCLI config
seed_everything: 42
trainer:
  gpus: 2   # two cards
  precision: 16
  strategy: 'ddp'
  max_epochs: 10
  resume_from_checkpoint: null

  replace_sampler_ddp: false
  callbacks:
    - class_path: pytorch_lightning.callbacks.EarlyStopping
      init_args:
        monitor: val_loss
model:
  precision: 16
  gpus: 2
"""

EXPECTED = """\
# LightningCLI config
seed_everything: 42
trainer:
  accelerator: gpu
  devices: 2   # two cards
  precision: '16-mixed'
  strategy: 'ddp_find_unused_parameters_true'
  max_epochs: 10

  use_distributed_sampler: false
  callbacks:
    - class_path: pytorch_lightning.callbacks.EarlyStopping
      init_args:
        monitor: val_loss
model:
  precision: 16
  gpus: 2
"""


def test_trainer_section_rewritten_rest_byte_identical():
    out = transform_yaml(CONFIG)
    assert out.text == EXPECTED
    assert transform_yaml(out.text).text == out.text
    parsed = yaml.safe_load(out.text)
    assert parsed["trainer"] == {
        "accelerator": "gpu", "devices": 2, "precision": "16-mixed", "strategy": "ddp_find_unused_parameters_true",
        "max_epochs": 10, "use_distributed_sampler": False,
        "callbacks": [{"class_path": "pytorch_lightning.callbacks.EarlyStopping", "init_args": {"monitor": "val_loss"}}],
    }
    assert parsed["model"] == yaml.safe_load(CONFIG)["model"]


def test_crlf_and_no_trainer_changes():
    crlf = CONFIG.replace("\n", "\r\n")
    out = transform_yaml(crlf)
    assert out.text == EXPECTED.replace("\n", "\r\n")
    plain = "model:\n  gpus: 2\n"
    assert transform_yaml(plain).text == plain and not transform_yaml(plain).changed


def test_what_cannot_be_edited_is_marked_once():
    src = "trainer:\n  accumulate_grad_batches: {0: 1, 4: 2}\n  amp_backend: apex\n  gpus: *n\n"
    out = transform_yaml(src)
    markers = [f for f in out.findings if f.kind is Kind.MARKER]
    assert {m.message.split(":")[0] for m in markers} == {"T11", "T8", "T1-T4"}
    assert "  accumulate_grad_batches: {0: 1, 4: 2}\n" in out.text and "  gpus: *n\n" in out.text
    assert transform_yaml(out.text).text == out.text
    assert yaml.safe_load(out.text.replace("*n", "2"))["trainer"]["amp_backend"] == "apex"


def test_flow_style_trainer_is_marked():
    src = "trainer: {gpus: 2}\n"
    out = transform_yaml(src)
    assert out.text.startswith("# TODO(lightmigrate): LM101 the trainer section is not a plain block mapping")
    assert out.text.endswith(src) and transform_yaml(out.text).text == out.text


def test_accelerator_note():
    out = transform_yaml("trainer:\n  max_epochs: 3\n")
    assert not out.changed
    assert [f.message[:8] for f in out.findings if f.kind is Kind.NOTE] == ["B-1/T29:"]


def test_scalars():
    assert parse_scalar("16") == (16, "plain")
    assert parse_scalar('"16"') == ("16", '"')
    assert parse_scalar("~")[0] is None and parse_scalar("false")[0] is False
    assert parse_scalar("[0, 1]") == ([0, 1], "flow")
    assert parse_scalar("&a 2")[0] is NOT_LITERAL and parse_scalar("!!str 2")[0] is NOT_LITERAL


def test_discovery_and_run(tmp_path):
    (tmp_path / "config.yaml").write_text(CONFIG)
    (tmp_path / "other.yaml").write_text("model:\n  trainer_like: 1\n")
    (tmp_path / "train.py").write_text("x = 1\n")
    found = sorted(os.path.basename(e.path) for e in discover([str(tmp_path)]))
    assert found == ["config.yaml", "train.py"]
    assert has_trainer_section(CONFIG) and not has_trainer_section("model:\n  trainer: 1\n")
    report = run([str(tmp_path)], ALL_RULES, Mode.WRITE)
    assert (tmp_path / "config.yaml").read_text() == EXPECTED
    assert sum(f.changed for f in report.files) == 1
    # without LM101 selected, the config is left alone
    (tmp_path / "config.yaml").write_text(CONFIG)
    run([str(tmp_path)], select_rules(["LM001"]), Mode.WRITE)
    assert (tmp_path / "config.yaml").read_text() == CONFIG


def test_removed_trainer_keys_are_never_left_silent():
    # issue 21, kind 5: a plain config (not LightningCLI-shaped) that code passes as
    # ``Trainer(**cfg.trainer)``; 2.x's Trainer rejects these keys with a TypeError
    src = (
        "# read by train.py\n"
        "trainer:\n"
        "  max_epochs: 3  # short\n"
        "  track_grad_norm: 2\n"
        "  truncated_bptt_steps: 5\n"
        "  reload_dataloaders_every_epoch: true\n"
        "model:\n"
        "  lr: 0.1\n"
    )
    out = transform_yaml(src, "conf.yaml")
    lines = out.text.splitlines()
    marks = [line.strip() for line in lines if "TODO(lightmigrate)" in line]
    assert [m.split(": `")[0] for m in marks] == ["# TODO(lightmigrate): LM101 T10/M17", "# TODO(lightmigrate): LM101 M16"]
    assert "`track_grad_norm` was removed (2.x's Trainer rejects it); log the norms in the LightningModule" in marks[0]
    assert lines[lines.index("  track_grad_norm: 2") - 1].strip() == marks[0]
    assert lines[lines.index("  truncated_bptt_steps: 5") - 1].strip() == marks[1]
    # the 1.x flag has a 2.x name with the same meaning
    assert "  reload_dataloaders_every_n_epochs: 1" in lines and "reload_dataloaders_every_epoch" not in out.text
    assert out.markers == 2
    assert transform_yaml(out.text, "conf.yaml").text == out.text  # a second run changes nothing


def test_removed_trainer_keys_set_to_their_off_value_are_dropped():
    src = "trainer:\n  track_grad_norm: -1\n  truncated_bptt_steps: null\n  reload_dataloaders_every_epoch: false\n  max_epochs: 1\n"
    out = transform_yaml(src, "conf.yaml")
    assert out.text == "trainer:\n  max_epochs: 1\n"
    assert out.markers == 0
