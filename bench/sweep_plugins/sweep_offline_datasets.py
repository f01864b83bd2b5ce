"""pytest plugin for the real-project sweep: the public data sets some projects' tests download,
made up locally with the same columns, types and shapes, so the tests run where only PyPI is
reachable. Both sides of the sweep get the same data (fixed seeds).

Loaded with ``-p sweep_offline_datasets`` before the project's conftest is imported, it
replaces ``sklearn.datasets.fetch_california_housing`` and ``fetch_covtype`` and, for the UCI
occupancy zip only, ``urllib.request.urlopen``. The numbers are random (with some signal in the
targets so training has something to learn): tests that check accuracy on the real data sets
may fail on both sides alike, which the sweep does not count as a regression.
"""

from __future__ import annotations

import io
import urllib.request
import zipfile

import numpy as np
import pandas as pd
import sklearn.datasets
from sklearn.utils import Bunch

CALIFORNIA = ["MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude",
              "Longitude"]
OCCUPANCY_URL_PART = "00357/occupancy_data.zip"
_real_urlopen = urllib.request.urlopen


def fetch_california_housing(*args, as_frame=False, **kwargs):
    rng = np.random.default_rng(0)
    n = 6000
    x = pd.DataFrame({
        "MedInc": rng.gamma(4.0, 1.0, n), "HouseAge": rng.integers(1, 53, n).astype(float),
        "AveRooms": rng.normal(5.4, 1.0, n), "AveBedrms": rng.normal(1.1, 0.1, n),
        "Population": rng.gamma(2.0, 700.0, n), "AveOccup": rng.normal(3.0, 0.5, n),
        "Latitude": rng.uniform(32.5, 42.0, n), "Longitude": rng.uniform(-124.3, -114.3, n),
    })
    y = pd.Series(0.4 * x["MedInc"] + 0.01 * x["HouseAge"] + rng.normal(0, 0.3, n), name="MedHouseVal")
    frame = pd.concat([x, y], axis=1)
    if as_frame:
        return Bunch(data=x, target=y, frame=frame, target_names=["MedHouseVal"], feature_names=CALIFORNIA)
    return Bunch(data=x.to_numpy(), target=y.to_numpy(), frame=None, target_names=["MedHouseVal"],
                 feature_names=CALIFORNIA)


def fetch_covtype(*args, **kwargs):
    rng = np.random.default_rng(1)
    n = 12000
    continuous = np.column_stack([rng.normal(2950, 280, n)] + [rng.normal(0, 1, n) for _ in range(9)])
    wilderness = np.eye(4)[rng.integers(0, 4, n)]
    soil = np.eye(40)[rng.integers(0, 40, n)]
    data = np.hstack([continuous, wilderness, soil])
    score = (continuous[:, 0] - 2950) / 280 + continuous[:, 1]
    target = np.digitize(score, np.quantile(score, [1 / 7 * i for i in range(1, 7)])) + 1
    return Bunch(data=data, target=target.astype(np.int32), frame=None, target_names=["Cover_Type"])


def _occupancy_zip() -> bytes:
    rng = np.random.default_rng(2)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        start = pd.Timestamp("2015-02-04 17:51:00")
        for name, n in (("datatraining.txt", 8143), ("datatest.txt", 2665), ("datatest2.txt", 9752)):
            occupied = rng.random(n) < 0.23
            frame = pd.DataFrame({
                "date": (start + pd.to_timedelta(np.arange(n), unit="min")).strftime("%Y-%m-%d %H:%M:%S"),
                "Temperature": rng.normal(21, 1, n) + occupied, "Humidity": rng.normal(27, 5, n),
                "Light": np.where(occupied, rng.normal(450, 50, n), rng.normal(20, 10, n)),
                "CO2": rng.normal(600, 200, n) + 300 * occupied, "HumidityRatio": rng.normal(0.0042, 0.0008, n),
                "Occupancy": occupied.astype(int),
            }, index=pd.RangeIndex(1, n + 1))
            text = frame.to_csv()  # the real files' header has no field for the row number
            zf.writestr(name, text[1:] if text.startswith(",") else text)
            start += pd.Timedelta(minutes=n)
    return buf.getvalue()


def urlopen(url, *args, **kwargs):
    if OCCUPANCY_URL_PART in str(getattr(url, "full_url", url)):
        return io.BytesIO(_occupancy_zip())
    return _real_urlopen(url, *args, **kwargs)


sklearn.datasets.fetch_california_housing = fetch_california_housing
sklearn.datasets.fetch_covtype = fetch_covtype
urllib.request.urlopen = urlopen
