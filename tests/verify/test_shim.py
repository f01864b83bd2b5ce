"""Unit tests of the v1 shim on small in-process 1.x-style models (Lightning 2.x interpreter).

The shim's faithfulness to real 1.9.5 is proven in ``test_shim_oracle.py``; these tests pin
the individual mechanisms so a regression points at the piece that broke.
"""

import pytest

torch = pytest.importorskip("torch")
pl = pytest.importorskip("pytorch_lightning")

from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from lightmigrate.verify import shim_semantics as v1  # noqa: E402
from lightmigrate.verify.shim import apply_v1_shim, hook_log, is_shimmed, legacy_hooks  # noqa: E402


def _loader(n=12, batch_size=4, seed=0, dim=3):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1)), batch_size=batch_size)


def _fit(model, loader=None, val=None, **trainer_kwargs):
    model, kwargs = apply_v1_shim(model, trainer_kwargs)
    settings = dict(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                    enable_model_summary=False, enable_checkpointing=False, max_epochs=1,
                    num_sanity_val_steps=0)
    settings.update(kwargs)
    trainer = pl.Trainer(**settings)
    trainer.fit(model, loader if loader is not None else _loader(), val)
    return trainer


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x).squeeze(-1), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


# ------------------------------------------------------------------------------------------
# the generated class


def test_model_keeps_its_identity_and_state_dict_keys():
    model = Regressor()
    keys = list(model.state_dict())
    shimmed, kwargs = apply_v1_shim(model, {"max_epochs": 2, "accumulate_grad_batches": 3, "gradient_clip_val": 1.0})
    assert shimmed is model and is_shimmed(model)
    assert isinstance(model, Regressor) and type(model).__name__ == "Regressor"
    assert list(model.state_dict()) == keys
    assert "accumulate_grad_batches" not in kwargs and "gradient_clip_val" not in kwargs
    assert kwargs["max_epochs"] == 2 and type(kwargs["callbacks"][0]).__name__ == "V1ShimCallback"
    again, kwargs2 = apply_v1_shim(model, {"callbacks": kwargs["callbacks"]})
    assert again is model and len(kwargs2["callbacks"]) == 1  # idempotent, one shim callback


def test_epoch_end_hooks_pass_the_2x_validator_but_stay_callable_for_user_code():
    class WithEpochEnds(Regressor):
        def __init__(self):
            super().__init__()
            self.seen = []

        def validation_step(self, batch, batch_idx):
            return batch[1].sum()

        def validation_epoch_end(self, outputs):
            self.seen.append(len(outputs))

        def training_epoch_end(self, outputs):
            self.validation_epoch_end(outputs)  # user code calling its own 1.x hook

    model = WithEpochEnds()
    _fit(model, val=_loader(8, seed=1))
    assert model.seen == [2, 3]  # validation (2 batches), then training_epoch_end (3 batches)
    assert hook_log(model) == {"validation_epoch_end": 1, "training_epoch_end": 1}
    assert set(legacy_hooks(model)) == {"validation_epoch_end", "training_epoch_end"}


# ------------------------------------------------------------------------------------------
# step_end


class StepEnd(Regressor):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor
        self.outputs = None

    def training_step(self, batch, batch_idx):
        return {"loss": super().training_step(batch, batch_idx), "raw": True}

    def training_step_end(self, out):
        if self.factor is None:
            return None
        return {"loss": out["loss"] * self.factor, "raw": False}

    def training_epoch_end(self, outputs):
        self.outputs = outputs


def _weights_after(model):
    torch.manual_seed(0)
    _fit(model)
    return model.layer.weight.detach().clone()


def test_training_step_end_return_is_the_loss_that_is_backpropagated():
    torch.manual_seed(0)
    frozen = StepEnd(0.0)
    before = frozen.layer.weight.detach().clone()
    assert torch.equal(_weights_after(frozen), before)  # zero loss from step_end: no update
    assert all(o["raw"] is False for o in frozen.outputs)
    torch.manual_seed(0)
    doubled, plain = StepEnd(2.0), StepEnd(None)
    plain.load_state_dict(doubled.state_dict())
    w_doubled, w_plain = _weights_after(doubled), _weights_after(plain)
    assert not torch.allclose(w_doubled, w_plain)
    assert all(o["raw"] is True for o in plain.outputs)  # None keeps the raw step output
    ratio = doubled.outputs[0]["loss"] / plain.outputs[0]["loss"]
    assert torch.isclose(ratio, torch.tensor(2.0))


# ------------------------------------------------------------------------------------------
# several optimizers


class TwoOptimizers(pl.LightningModule):
    def __init__(self, frequencies=None):
        super().__init__()
        self.a = nn.Linear(3, 1)
        self.b = nn.Linear(3, 1)
        self.frequencies = frequencies
        self.calls = []
        self.outputs = None

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        self.calls.append((self.current_epoch, batch_idx, optimizer_idx,
                           self.a.weight.requires_grad, self.b.weight.requires_grad,
                           self.automatic_optimization))
        layer = self.a if optimizer_idx == 0 else self.b
        return torch.nn.functional.mse_loss(layer(x).squeeze(-1), y)

    def training_epoch_end(self, outputs):
        self.outputs = outputs

    def configure_optimizers(self):
        opt_a = torch.optim.SGD(self.a.parameters(), lr=0.1)
        opt_b = torch.optim.SGD(self.b.parameters(), lr=0.1)
        if self.frequencies:
            return [{"optimizer": opt_a, "frequency": self.frequencies[0]},
                    {"optimizer": opt_b, "frequency": self.frequencies[1]}]
        return [opt_a, opt_b]


def test_two_optimizers_toggle_parameters_and_count_every_step():
    model = TwoOptimizers()
    trainer = _fit(model)
    assert [c[2] for c in model.calls] == [0, 1] * 3
    for _, _, idx, a_grad, b_grad, automatic in model.calls:
        assert (a_grad, b_grad) == ((True, False) if idx == 0 else (False, True))
        assert automatic is True  # user code still sees 1.x automatic optimization
    assert model.a.weight.requires_grad and model.b.weight.requires_grad  # untoggled afterwards
    assert trainer.global_step == 6
    assert len(model.outputs) == 3 and all(len(per_batch) == 2 for per_batch in model.outputs)


def test_frequencies_pick_the_optimizer_by_the_per_epoch_batch_index():
    model = TwoOptimizers(frequencies=(2, 1))
    trainer = _fit(model, _loader(20), max_epochs=2)
    for epoch in (0, 1):
        assert [c[2] for c in model.calls if c[0] == epoch] == [0, 0, 1, 0, 0]
    assert trainer.global_step == 10
    assert all(isinstance(per_batch, list) and len(per_batch) == 1 for per_batch in model.outputs)


def test_accumulation_and_clipping_return_to_the_trainer_after_its_checks():
    model = TwoOptimizers()
    trainer = _fit(model, _loader(20), accumulate_grad_batches=2, gradient_clip_val=0.5)
    assert trainer.global_step == 2 * 3  # windows (0,1), (2,3), (4): 3 optimizer steps each
    losses = [per_batch[0]["loss"] for per_batch in model.outputs]
    assert len(losses) == 5
    # restored after fit, so a later trainer.fit passes 2.x's manual-optimization checks again
    assert trainer.accumulate_grad_batches == 1 and trainer.gradient_clip_val is None


def test_user_code_sees_its_own_1x_methods():
    class OldStep(Regressor):
        def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None,
                           on_tpu=False, using_lbfgs=False):
            self.flags = (optimizer_idx, on_tpu, using_lbfgs)
            optimizer.step(closure=optimizer_closure)

    model = OldStep()
    apply_v1_shim(model)
    assert model.optimizer_step.__func__ is OldStep.optimizer_step  # looked up from user code
    _fit(model)
    assert model.flags == (0, False, False)
    assert hook_log(model) == {"optimizer_step": 3}


# ------------------------------------------------------------------------------------------
# 1.9 data handling


def test_epoch_end_nesting_and_the_one_batch_squeeze():
    d = [{"loss": i} for i in range(4)]
    # one optimizer: flat list, skipped batch gone
    assert v1.epoch_end_outputs([[{0: d[0]}], [], [{0: d[1]}]], True, 1) == [d[0], d[1]]
    # two optimizers: [batch][optimizer], missing entries removed
    assert v1.epoch_end_outputs([[{0: d[0], 1: d[1]}], [{0: d[2]}]], True, 2) == [[d[0], d[1]], [d[2]]]
    # one batch, two optimizers: the batch dimension is squeezed away
    assert v1.epoch_end_outputs([[{0: d[0], 1: d[1]}]], True, 2) == [d[0], d[1]]
    # one batch, one optimizer: re-wrapped
    assert v1.epoch_end_outputs([[{0: d[0]}]], True, 1) == [d[0]]
    # every step skipped: still called, with []
    assert v1.epoch_end_outputs([[], []], True, 1) == []
    # TBPTT, one optimizer: [batch][split]
    assert v1.epoch_end_outputs([[{0: d[0]}, {0: d[1]}], [{0: d[2]}, {0: d[3]}]], True, 1) == [[d[0], d[1]], [d[2], d[3]]]


def test_batch_end_outputs():
    d0, d1 = {"loss": 0}, {"loss": 1}
    assert v1.batch_end_outputs([{0: d0}], True, 1) is d0
    assert v1.batch_end_outputs([], True, 1) == []
    assert v1.batch_end_outputs([{0: d0, 1: d1}], True, 2) == [d0, d1]
    assert v1.batch_end_outputs([{1: d1}], True, 2) == [d1]
    assert v1.batch_end_outputs([d0], False, 1) is d0


def test_active_optimizers_and_accumulation_schedule():
    opts = ["a", "b"]
    assert v1.active_optimizers(opts, [], 7) == [(0, "a"), (1, "b")]
    assert [v1.active_optimizers(opts, [2, 1], i)[0][0] for i in range(6)] == [0, 0, 1, 0, 0, 1]
    assert v1.accumulation_for_epoch(3, 5) == 3
    assert [v1.accumulation_for_epoch({1: 2, 3: 4}, e) for e in range(5)] == [1, 2, 2, 4, 4]


def test_tbptt_split_uses_chunks_of_length_k():
    x = torch.arange(2 * 7).reshape(2, 7)
    splits = v1.tbptt_split([x, [[1, 2, 3, 4, 5, 6, 7]]], 3)
    assert [s[0].shape[1] for s in splits] == [3, 3, 1]
    assert splits[2][1] == [[7]]


def test_step_result_divides_and_detaches_the_loss_only():
    loss = torch.tensor(3.0, requires_grad=True) * 1
    extra = torch.ones(2, requires_grad=True) * 1
    result = v1.StepResult.automatic({"loss": loss, "x": extra, "hiddens": 1}, 3)
    assert float(result.loss) == 1.0 and not result.loss.requires_grad
    assert result.closure_loss.requires_grad and result.extra["x"].requires_grad
    assert "hiddens" not in result.asdict()
    with pytest.raises(Exception, match="'loss' key needs to be present"):
        v1.StepResult.automatic({"x": extra}, 1)
