"""Unit tests for lightmigrate.verify.compare (pure Python, no torch)."""

from lightmigrate.verify.compare import (
    MISSING,
    compare_case,
    compare_results,
    compare_values,
    format_differences,
    group_by_case,
    numbers_close,
    _Collector,
)


def T(values, shape=None, dtype="torch.float32", requires_grad=False):
    values = list(values)
    return {
        "tensor": [len(values)] if shape is None else shape,
        "dtype": dtype,
        "values": values,
        "requires_grad": requires_grad,
    }


def record(**overrides):
    base = {
        "error": None,
        "traceback": None,
        "metrics": [[0, "epoch", 0.0], [0, "loss", 0.5], [1, "loss", 0.25], [1, "val_acc", 0.75]],
        "epoch_end": [
            {"stage": "validation", "sanity": True, "epoch": 0, "hook": "validation_epoch_end",
             "captured": True, "param": "outputs", "value": [[T([1.0, 2.0])], []]},
            {"stage": "validation", "sanity": False, "epoch": 0, "hook": "validation_epoch_end",
             "captured": True, "param": "outputs", "value": [[T([1.0, 2.0]), T([3.0, 4.0])], [{"loss": T([0.5], shape=[])}]]},
            {"stage": "train", "sanity": False, "epoch": 0, "hook": "training_epoch_end",
             "captured": True, "param": "outputs", "value": [{"loss": T([0.25], shape=[])}]},
        ],
        "global_step": 2,
        "current_epoch": 1,
        "returns": [],
        "state_dict": {"w": T([0.1, 0.2, 0.3])},
        "optimizers": [{"state": {}, "param_groups": [{"lr": 0.1, "params": [0]}]}],
        "callback_metrics": {"loss": T([0.25], shape=[])},
    }
    base.update(overrides)
    return base


def v2(rec):
    """The same record as the migrated side would produce (hook names differ)."""
    out = dict(rec)
    out["epoch_end"] = [dict(e, hook="on_" + e["hook"].replace("training", "train")) for e in rec["epoch_end"]]
    return out


def test_identical_records_have_no_differences():
    assert compare_case("c", record(), v2(record())) == []


def test_numbers_close_respects_rtol_and_atol():
    assert numbers_close(1.0, 1.0 + 5e-6)  # within rtol 1e-5
    assert not numbers_close(1.0, 1.0 + 5e-5)
    assert numbers_close(0.0, 5e-9)  # atol
    assert not numbers_close(0.0, 5e-8)
    assert numbers_close(1.0, 1.0 + 5e-5, rtol=1e-4)
    assert numbers_close(float("nan"), float("nan"))
    assert not numbers_close(float("inf"), 1e308)
    assert numbers_close(float("inf"), float("inf"))


def test_metric_value_outside_tolerance_is_reported_with_step_and_key():
    actual = record(metrics=[[0, "epoch", 0.0], [0, "loss", 0.5], [1, "loss", 0.2501], [1, "val_acc", 0.75]])
    diffs = compare_case("c", record(), actual)
    assert [d.path for d in diffs] == ['c/metrics[step=1]["loss"]']
    assert diffs[0].expected == 0.25 and diffs[0].actual == 0.2501


def test_metric_within_tolerance_is_not_reported():
    actual = record(metrics=[[0, "epoch", 0.0], [0, "loss", 0.5 * (1 + 1e-6)], [1, "loss", 0.25], [1, "val_acc", 0.75]])
    assert compare_case("c", record(), actual) == []
    assert compare_case("c", record(), actual, rtol=1e-8) != []


def test_missing_extra_and_moved_metrics():
    actual = record(metrics=[[0, "epoch", 0.0], [0, "loss", 0.5], [2, "loss", 0.25], [1, "extra", 1.0]])
    paths = {d.path: d for d in compare_case("c", record(), actual)}
    assert paths['c/metrics[step=1]["loss"]'].actual == MISSING
    assert paths['c/metrics[step=1]["val_acc"]'].actual == MISSING
    assert paths['c/metrics[step=2]["loss"]'].expected == MISSING
    assert paths['c/metrics[step=1]["extra"]'].expected == MISSING


def test_metric_order_within_a_step_does_not_matter():
    rows = record()["metrics"]
    assert compare_case("c", record(), record(metrics=list(reversed(rows)))) == []


def test_epoch_end_value_difference_has_a_precise_path():
    actual = v2(record())
    actual["epoch_end"][1] = dict(actual["epoch_end"][1], value=[[T([1.0, 2.0]), T([3.0, 4.5])], [{"loss": T([0.5], shape=[])}]])
    diffs = compare_case("c", record(), actual)
    assert [d.path for d in diffs] == ["c/epoch_end/validation[1][0][1]"]
    assert "flat index 1" in diffs[0].message


def test_epoch_end_dict_key_path_and_structure():
    actual = v2(record())
    actual["epoch_end"][2] = dict(actual["epoch_end"][2], value=[{"loss": T([0.5], shape=[])}])
    diffs = compare_case("c", record(), actual)
    assert [d.path for d in diffs] == ['c/epoch_end/train[0][0]["loss"]']

    flat = v2(record())
    flat["epoch_end"][0] = dict(flat["epoch_end"][0], value=[T([1.0, 2.0])])  # list of lists flattened
    diffs = compare_case("c", record(), flat)
    assert diffs and diffs[0].path == "c/epoch_end/validation[0]"
    assert "length" in diffs[0].message


def test_epoch_end_invocation_count_and_position():
    fewer = v2(record())
    fewer["epoch_end"] = [e for e in fewer["epoch_end"] if not e["sanity"]]
    diffs = compare_case("c", record(), fewer)
    assert diffs[0].path == "c/epoch_end/validation"
    assert "2 time(s) in the original, 1 after migration" in diffs[0].message


def test_epoch_end_unused_argument_is_not_compared_but_unbound_value_is_reported():
    expected = record()
    expected["epoch_end"][2] = dict(expected["epoch_end"][2], captured=False, value=None, param=None)
    actual = v2(record())
    actual["epoch_end"][2] = dict(actual["epoch_end"][2], captured=False, value=None)
    assert compare_case("c", expected, actual) == []

    actual = v2(record())
    actual["epoch_end"][2] = dict(actual["epoch_end"][2], captured=False, value=None, param=None)
    diffs = compare_case("c", record(), actual)
    assert [d.path for d in diffs] == ["c/epoch_end/train[0]"]
    assert diffs[0].actual == MISSING


def test_tensor_shape_dtype_and_grad():
    out = _Collector(None)
    compare_values(T([1.0, 2.0]), T([1.0, 2.0], shape=[2, 1]), "p", out)
    compare_values(T([1.0, 2.0]), T([1.0, 2.0], dtype="torch.float64"), "q", out)
    compare_values(T([1.0]), T([1.0], requires_grad=True), "r", out)
    assert [d.path for d in out.items] == ["p", "q"]
    out = _Collector(None)
    compare_values(T([1.0]), T([1.0], requires_grad=True), "r", out, check_requires_grad=True)
    assert [d.path for d in out.items] == ["r"]


def test_scalars_types_and_reprs():
    out = _Collector(None)
    compare_values({"a": 1, "b": "x", "c": True, "d": {"repr": "Foo()"}, "e": {"tuple": [1, 2]}},
                   {"a": 1.0, "b": "y", "c": 1, "d": {"repr": "Bar()"}, "e": [1, 2]}, "v", out)
    paths = sorted(d.path for d in out.items)
    assert paths == ['v["b"]', 'v["c"]', 'v["d"]["repr"]', 'v["e"]']


def test_weights_global_step_and_optimizer_state():
    actual = record(global_step=3, state_dict={"w": T([0.1, 0.2, 0.31])})
    actual["optimizers"] = [{"state": {}, "param_groups": [{"lr": 0.05, "params": [0]}]}]
    paths = [d.path for d in compare_case("c", record(), actual)]
    assert paths == ["c/global_step", 'c/state_dict["w"]', 'c/optimizers[0]["param_groups"][0]["lr"]']


def test_errors_short_circuit():
    failed = record(error="NotImplementedError: boom", traceback="Traceback...\nNotImplementedError: boom")
    diffs = compare_case("c", record(), failed)
    assert len(diffs) == 1 and diffs[0].path == "c/error" and "migrated run failed" in diffs[0].message
    diffs = compare_case("c", failed, record())
    assert len(diffs) == 1 and "original run failed" in diffs[0].message


def test_limit_keeps_the_first_differences_and_counts_the_rest():
    rows = [[i, "loss", float(i)] for i in range(30)]
    actual = record(metrics=[[i, "loss", float(i) + 1] for i in range(30)])
    diffs = compare_case("c", record(metrics=rows), actual, limit=5)
    assert len(diffs) == 6
    assert diffs[0].path == 'c/metrics[step=0]["loss"]'
    assert "25 more" in diffs[-1].message


def test_compare_results_by_case_and_missing_cases():
    expected = {"cases": {"a": record(), "b": record()}}
    actual = {"cases": {"a": v2(record()), "c": record()}}
    diffs = compare_results(expected, actual)
    grouped = group_by_case(diffs)
    assert set(grouped) == {"b", "c"}
    assert "missing" in grouped["b"][0].message
    assert format_differences(diffs)
