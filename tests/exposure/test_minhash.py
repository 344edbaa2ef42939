"""Audits by the MinHash lens: estimates close to the exact Jaccard audit on the same corpus,
exact flags by string equality, a validation sample against exact Jaccard stored with the
audit, and its own id and signature."""

from __future__ import annotations

import json

import pytest

from tests.exposure.audited import loaded_warehouse
from tests.exposure.synthetic_corpus import make_corpus
from warehouse import Warehouse
from warehouse.exposure.audit import run_audit
from warehouse.exposure.config import AuditConfig


@pytest.fixture
def loaded(db_path, write_lines):
    con = loaded_warehouse(db_path, write_lines, make_corpus(n_train=3000, n_test=200, seed=3))
    yield con
    con.close()


def _rows(con, audit_id):
    return con.execute(
        "SELECT source_exposure, source_nn, source_exact, bin FROM exposures WHERE audit_id = ? "
        "ORDER BY seg_idx",
        [audit_id],
    ).fetchall()


def test_minhash_estimates_follow_the_exact_jaccard_audit(loaded):
    exact = run_audit(loaded, "train", "test", AuditConfig())
    minhash = run_audit(loaded, "train", "test", AuditConfig(measure="minhash", validate_sample=80))
    assert minhash.audit_id != exact.audit_id and minhash.mode == "fast"
    assert "|mode:minhash(bins:128,bands:32)|measure:" not in minhash.signature
    assert "mode:minhash(bins:128,bands:32)" in minhash.signature
    want, got = _rows(loaded, exact.audit_id), _rows(loaded, minhash.audit_id)
    # Exact copies are exact in both, at the same (lowest) row.
    for w, g in zip(want, got, strict=True):
        if w[2]:
            assert g[:3] == (1.0, w[1], True)
    # Near duplicates (Jaccard >= 0.85) are found, at an estimate close to the truth.
    near = [(w, g) for w, g in zip(want, got, strict=True) if w[0] >= 0.85 and not w[2]]
    assert near, "the synthetic corpus has near duplicates"
    found = [(w, g) for w, g in near if g[1] == w[1]]
    assert len(found) >= 0.9 * len(near)
    assert max(abs(w[0] - g[0]) for w, g in found) < 0.2
    v = minhash.validation
    assert v is not None and v["sample_size"] == 80 and v["seed"] == 12345
    assert v["bin_agreement"] >= 0.8 and v["top1_agreement"] >= 0.5


def test_minhash_from_the_cli_and_in_the_lens_view(run_cli, loaded, db_path):
    loaded.close()
    out = run_cli("audit", "--train", "train", "--testset", "test", "--measure", "minhash",
                  "--validate-sample", "20", "--json", db=db_path)  # fmt: skip
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["validation"]["sample_size"] == 20 and doc["mode"] == "fast"
    # The warning names the lens the user chose, not a --mode they never gave.
    assert doc["measure"] == "minhash"
    assert any(w.startswith("MinHash estimates each exposure") for w in doc["warnings"])
    assert not any("--mode fast" in w for w in doc["warnings"]), doc["warnings"]
    assert run_cli("audit", "--train", "train", "--testset", "test", db=db_path).exit_code == 0
    with Warehouse.open(db_path, access="read") as wh:
        rows = list(wh.query("SELECT minhash_audit_id, jaccard_audit_id, source_minhash, "
                             "source_jaccard FROM exposure_lenses"))  # fmt: skip
        board = list(wh.query("SELECT count(*) AS n FROM audits"))
    assert len(rows) == 200 and rows[0]["minhash_audit_id"] == doc["audit_id"]
    assert board == [{"n": 2}]


def _all_rows(con, audit_id):
    return con.execute(
        "SELECT * EXCLUDE (audit_id) FROM exposures WHERE audit_id = ? ORDER BY seg_idx",
        [audit_id],
    ).fetchall()


@pytest.mark.parametrize("side", ["both", "source", "target"])
def test_a_minhash_audit_in_shards_within_a_memory_limit_equals_the_whole_index(
    loaded, monkeypatch, side
):
    from warehouse.exposure.execution import Execution
    from warehouse.exposure.index import minhash

    config = AuditConfig(measure="minhash", side=side)
    whole = _all_rows(loaded, run_audit(loaded, "train", "test", config).audit_id)
    # A row costing 1 MiB to build: a 1 GiB limit takes a few hundred rows per shard.
    monkeypatch.setattr(minhash, "PER_ROW", 2**20)
    told: list[str] = []
    sharded = run_audit(loaded, "train", "test", config, Execution(memory_limit=2**30),
                        force=True, notify=told.append)  # fmt: skip
    assert any("in shards of" in t and "one at a time" in t for t in told), told
    assert _all_rows(loaded, sharded.audit_id) == whole
