"""The executors, the Dask ones on a light in-process LocalCluster."""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq
import pytest

from memcglab.cli import main
from memcglab.sweep import run_grid
from memcglab.sweep.executors import describe_executor, iter_completed

from .conftest import SWEEP_NOTEBOOK
from .points import Point, fail_on_three, walks

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    # processes=False: scheduler and worker are threads of this process, so no worker
    # pays for a fresh interpreter and the test stays light on a 2-core CI machine.
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2,
                                  dashboard_address=None) as c:
        yield c


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as c:
        yield c


def test_failures_are_yielded_not_raised_and_every_item_comes_back():
    out = sorted(iter_completed(fail_on_three, [{"slots": s} for s in (1, 3, 5)]),
                 key=lambda o: o[0])
    assert [(i, v) for i, v, _ in out] == [(0, {"double": 2}), (1, None), (2, {"double": 10})]
    assert isinstance(out[1][2], ValueError)


def test_dask_client_runs_the_grid_on_the_cluster(client):
    specs = [Point(s, p) for p in ("random", "lru") for s in (1, 2)]
    df = run_grid(walks, specs, client)
    assert list(df["walks"]) == [16, 26, 13, 23]
    serial = run_grid(walks, specs)
    pd.testing.assert_frame_equal(df.drop(columns="pid"), serial.drop(columns="pid"))
    assert describe_executor(client, 1) == f"dask {client.scheduler.address}"


def test_dask_failures_are_yielded_with_their_index(client):
    out = sorted(iter_completed(fail_on_three, [{"slots": 3}, {"slots": 4}], client),
                 key=lambda o: o[0])
    assert isinstance(out[0][2], ValueError) and out[1][1] == {"double": 8}


def test_the_sweep_command_on_a_dask_scheduler(cluster, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["sweep", str(SWEEP_NOTEBOOK), "-p", "slots", "1,2", "--out", str(out),
               "--scheduler", cluster.scheduler_address, "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    rows = pq.read_table(out / "results.parquet").to_pylist()
    assert [(r["slots"], r["walks"], r["status"]) for r in rows] == [(1, 16, "ok"), (2, 26, "ok")]
