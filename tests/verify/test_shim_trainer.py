"""The v1 shim's Trainer layer (``verify/shim_trainer.py``): 1.9 Trainer arguments that 2.x
rejects get their 1.9 meaning. Whether the shim then records what real 1.9.5 records is checked
on the corpus cases that use them (``trainer_precision_16_on_cpu``, ``trainer_gpus_none_at_runtime``,
``track_grad_norm_clip_accumulate``, ``log_grad_norm_override_inf``, ...) by test_shim_oracle.py."""

import pytest
import torch
from torch import nn

from lightmigrate.verify import shim_trainer
from lightmigrate.verify.shim_trainer import TRACK_GRAD_NORM_ATTR, grad_norm_v1, precision_v1, v1_trainer_kwargs


def test_explicit_1_9_defaults_are_dropped():
    kwargs, emulated = v1_trainer_kwargs({
        "gpus": None, "tpu_cores": 0, "strategy": None, "devices": None, "accelerator": None,
        "amp_backend": "native", "amp_level": None, "auto_select_gpus": False, "move_metrics_to_cpu": False,
        "resume_from_checkpoint": None, "auto_lr_find": True, "auto_scale_batch_size": "power", "max_epochs": 2,
    })
    assert kwargs == {"max_epochs": 2}
    assert emulated == {"track_grad_norm": -1, "multiple_trainloader_mode": "max_size_cycle"}


def test_renamed_and_reinterpreted_arguments():
    kwargs, emulated = v1_trainer_kwargs({"replace_sampler_ddp": False, "accumulate_grad_batches": None,
                                          "precision": 16, "track_grad_norm": "inf",
                                          "multiple_trainloader_mode": "min_size"})
    # 1.9 ran precision=16 on a CPU as bf16 autocast
    assert kwargs == {"use_distributed_sampler": False, "accumulate_grad_batches": 1, "precision": "bf16-mixed"}
    assert emulated == {"track_grad_norm": "inf", "multiple_trainloader_mode": "min_size"}
    assert v1_trainer_kwargs({"precision": 32})[0] == {"precision": "32-true"}
    assert v1_trainer_kwargs({"precision": "bf16"})[0] == {"precision": "bf16-mixed"}


def test_values_with_another_1_9_meaning_are_left_for_2_x_to_reject():
    # a GPU request: the shim cannot give it its meaning on the CPU
    kwargs, _ = v1_trainer_kwargs({"gpus": 2, "devices": 1})
    assert kwargs == {"gpus": 2, "devices": 1}


def test_module_precision_takes_its_1_9_value():
    assert precision_v1("32-true") == 32
    assert precision_v1("16-mixed") == 16
    assert precision_v1("bf16-mixed") == "bf16"
    assert precision_v1("64-true") == 64


def test_grad_norm_has_1_9_keys_and_rounding():
    layer = nn.Linear(2, 1)
    layer.weight.grad = torch.tensor([[3.0, 4.0]])
    layer.bias.grad = None  # parameters without a gradient are left out
    assert grad_norm_v1(layer, 2) == {"grad_2.0_norm/weight": 5.0, "grad_2.0_norm_total": 5.0}
    layer.bias.grad = torch.tensor([-0.123456])
    norms = grad_norm_v1(layer, "inf", group_separator="_")
    assert norms == {"grad_inf_norm_weight": 4.0, "grad_inf_norm_bias": 0.1235, "grad_inf_norm_total": 4.0}
    with pytest.raises(ValueError):
        grad_norm_v1(layer, 0)


def test_installed_trainer_accepts_1_9_arguments(tmp_path, monkeypatch):
    import pytorch_lightning as pl

    monkeypatch.setattr(pl.Trainer, "__init__", pl.Trainer.__init__)  # restored after the test
    monkeypatch.setattr(shim_trainer, "_INSTALLED", set())
    with pytest.raises(TypeError):
        pl.Trainer(gpus=None, logger=False, default_root_dir=tmp_path)
    shim_trainer.install("pytorch_lightning")
    trainer = pl.Trainer(gpus=None, strategy=None, replace_sampler_ddp=False, track_grad_norm=2, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, default_root_dir=tmp_path)
    assert trainer._accelerator_connector.use_distributed_sampler is False
    assert getattr(trainer, TRACK_GRAD_NORM_ATTR) == 2


def test_trainer_amp_backend_takes_its_1_9_value():
    class Trainer:
        def __init__(self, precision):
            self.precision = precision

    assert [shim_trainer.amp_backend_v1(Trainer(p)) for p in ("16-mixed", "bf16-mixed", "32-true", "64-true", "bf16-true")] \
        == ["native", "native", None, None, None]
