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
from lightmigrate.verify.shim import (  # noqa: E402
    adapt_v1_callback,
    apply_v1_shim,
    hook_log,
    is_shimmed,
    legacy_hooks,
)


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


# ------------------------------------------------------------------------------------------
# user callbacks with 1.9 signatures


class OldSignatureCallback(pl.Callback):
    """Hooks written for 1.9: opt_idx, dataloader_idx without default, predict outputs."""

    def __init__(self):
        self.calls = []

    def on_before_optimizer_step(self, trainer, pl_module, optimizer, opt_idx):
        self.calls.append(("before_step", opt_idx))

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.calls.append(("train_batch_end", outputs))

    def on_validation_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx):
        self.calls.append(("val_start", dataloader_idx))

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        self.calls.append(("val_end", dataloader_idx))

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        self.calls.append(("predict_end", dataloader_idx))

    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        self.calls.append(("predict_epoch_end", [len(per_loader) for per_loader in outputs]))


class NewSignatureCallback(pl.Callback):
    def __init__(self):
        self.calls = []

    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        self.calls.append("before_step")

    def on_train_epoch_end(self, trainer, pl_module):
        self.calls.append("epoch_end")


class Validating(Regressor):
    def validation_step(self, batch, batch_idx):
        return {"val": batch[1].sum()}

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        return batch[0].sum()


def _calls(callback, kind):
    return [value for name, value in callback.calls if name == kind]


def test_callback_before_optimizer_step_gets_the_optimizer_index():
    single = OldSignatureCallback()
    _fit(Regressor(), callbacks=[single])
    assert _calls(single, "before_step") == [0, 0, 0]
    double = OldSignatureCallback()
    _fit(TwoOptimizers(), callbacks=[double])
    assert _calls(double, "before_step") == [0, 1] * 3  # 1.9 order: per batch, per optimizer


def test_callback_eval_batch_hooks_always_get_dataloader_idx():
    callback = OldSignatureCallback()
    _fit(Validating(), val=_loader(8, seed=1), callbacks=[callback])  # ONE val loader
    assert _calls(callback, "val_start") == [0, 0] and _calls(callback, "val_end") == [0, 0]


def test_callback_on_predict_epoch_end_gets_the_predictions_per_loader():
    callback = OldSignatureCallback()
    model, kwargs = apply_v1_shim(Validating(), {"callbacks": [callback]})
    trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                         enable_model_summary=False, **kwargs)
    predictions = trainer.predict(model, [_loader(8), _loader(4)])
    assert [len(p) for p in predictions] == [2, 1]
    assert _calls(callback, "predict_end") == [0, 0, 1]
    assert _calls(callback, "predict_epoch_end") == [[2, 1]]


def test_callback_train_batch_end_gets_the_1_9_outputs_of_several_optimizers():
    callback = OldSignatureCallback()
    _fit(TwoOptimizers(), callbacks=[callback])
    outputs = _calls(callback, "train_batch_end")
    assert len(outputs) == 3
    for per_batch in outputs:  # 1.9: one dict per optimizer, the loss detached
        assert isinstance(per_batch, list) and len(per_batch) == 2
        assert all(set(d) == {"loss"} and not d["loss"].requires_grad for d in per_batch)


def test_callbacks_with_2x_signatures_and_lightning_callbacks_are_left_alone():
    new = NewSignatureCallback()
    checkpoint = pl.callbacks.ModelCheckpoint()
    assert type(adapt_v1_callback(new)) is NewSignatureCallback
    assert type(adapt_v1_callback(checkpoint)) is pl.callbacks.ModelCheckpoint
    _fit(Validating(), val=_loader(8, seed=1), callbacks=[new])
    assert new.calls == ["before_step"] * 3 + ["epoch_end"]


def test_callback_eval_hook_with_a_default_dataloader_idx_gets_1_9_s_zero():
    class DefaultNone(pl.Callback):
        seen = []

        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=None):
            self.seen.append(dataloader_idx)

    callback = DefaultNone()
    _fit(Validating(), val=_loader(8, seed=1), callbacks=[callback])
    assert callback.seen == [0, 0]  # 1.9 always passed the index; 2.x would leave the default


def test_adapted_callback_keeps_identity_state_key_and_its_own_methods():
    callback = OldSignatureCallback()
    key = callback.state_key
    assert adapt_v1_callback(callback) is callback and adapt_v1_callback(callback) is callback
    assert isinstance(callback, OldSignatureCallback) and type(callback).__name__ == "OldSignatureCallback"
    assert callback.state_key == key  # checkpoints keep the callback's state under the same key
    assert type(callback).__mro__[1] is OldSignatureCallback  # adapted once, not stacked
    # the user's own code calling its hook gets the 1.x method, as under 1.9
    assert callback.on_before_optimizer_step.__func__ is OldSignatureCallback.on_before_optimizer_step


def test_callbacks_from_configure_callbacks_are_adapted():
    callback = OldSignatureCallback()

    class WithCallbacks(Regressor):
        def configure_callbacks(self):
            return [callback]

    _fit(WithCallbacks())
    assert _calls(callback, "before_step") == [0, 0, 0]
