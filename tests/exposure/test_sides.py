"""Audits of one side (`audit --side source|target|both`): the side searched equals brute force,
the other stays NULL, bins follow the references in an audit of the target side alone, a text
corpus searches the side in its language, and every audit names the index it read."""

from __future__ import annotations

import json

import pytest

from tests.conftest import snapshot
from tests.exposure.audited import loaded_warehouse
from tests.exposure.brute_force import BruteForce
from tests.exposure.synthetic_corpus import make_corpus
from warehouse.analysis.bins import run_bin_intervals
from warehouse.errors import UsageError
from warehouse.exposure.audit import run_audit
from warehouse.exposure.config import AuditConfig, AuditOptions, text_side
from warehouse.exposure.execution import Execution
from warehouse.exposure.normalize import normalize_many
from warehouse.exposure.summary import choose_audit, tm_hypotheses
from warehouse.ingest.prepare import prepare_from_files
from warehouse.ingest.write import write_runs
from warehouse.metrics.registry import BLEU
from warehouse.stats.resample import BootstrapSettings

COLUMNS = (
    "seg_idx, source_exposure, source_nn, source_exact, target_exposure, target_nn, "
    "target_ref_idx, target_exact, pair_exposure, pair_nn, pair_exact, tm_hyp_idx, bin"
)


@pytest.fixture
def corpus():
    return make_corpus(n_train=200, n_test=50, seed=5, n_refs=2)


@pytest.fixture
def loaded(db_path, write_lines, corpus):
    con = loaded_warehouse(db_path, write_lines, corpus)
    yield con
    con.close()


def _rows(con, audit_id):
    return con.execute(
        f"SELECT {COLUMNS} FROM exposures WHERE audit_id = ? ORDER BY seg_idx", [audit_id]
    ).fetchall()


def _bin(exposure, exact, label):
    if exact:
        return label
    return "near" if exposure >= 0.7 else "medium" if exposure >= 0.3 else "far"


@pytest.mark.parametrize("measure", ["jaccard", "containment"])
def test_the_target_side_alone_equals_brute_force_and_bins_by_the_references(
    loaded, corpus, measure
):
    result = run_audit(loaded, "train", "test", AuditConfig(measure=measure, side="target"))
    assert result.side == "target" and "|side:target|" in result.signature
    assert "|pair:" not in result.signature
    brute = BruteForce(
        normalize_many(corpus.train_src), normalize_many(corpus.train_tgt), measure=measure
    )
    rows = _rows(loaded, result.audit_id)
    assert len(rows) == 50
    for row, refs in zip(rows, corpus.test_refs, strict=True):
        exposure, nn, ref_idx, exact = brute.target(normalize_many(refs))
        assert row[4] == pytest.approx(float(exposure), abs=1e-12)
        assert row[5:8] == (nn, ref_idx, exact)
        # The source side and the pair side were not searched: NULL, and no TM hypothesis.
        assert row[1:4] == (None, None, None) and row[8:12] == (None, None, None, None)
        assert row[12] == _bin(exposure, exact, "target_exact")
    assert any(r[12] == "target_exact" for r in rows)
    assert [s["side"] for s in result.sides] == ["target"] and result.pair_leak == {}
    assert [b["bin"] for b in result.bins] == ["target_exact", "near", "medium", "far"]
    assert all(b["mean_source_exposure"] is None for b in result.bins)
    assert loaded.execute(
        "SELECT count(*) FROM tm_segment_stats WHERE audit_id = ?", [result.audit_id]
    ).fetchone() == (0,)
    with pytest.raises(UsageError, match="no TM hypotheses"):
        tm_hypotheses(loaded, result.audit_id)


def test_the_source_side_alone_is_the_source_half_of_an_audit_of_both(loaded):
    both = run_audit(loaded, "train", "test")
    source = run_audit(loaded, "train", "test", AuditConfig(side="source"))
    assert source.audit_id != both.audit_id
    for one, whole in zip(_rows(loaded, source.audit_id), _rows(loaded, both.audit_id),
                          strict=True):  # fmt: skip
        assert one[:4] == whole[:4]
        assert one[4:11] == (None,) * 7
        assert (one[11], one[12]) == (whole[11], whole[12])  # TM hypothesis and bin
    tm = "SELECT bleu_stats, chrf_stats FROM tm_segment_stats WHERE audit_id = ? ORDER BY seg_idx"
    assert (
        loaded.execute(tm, [source.audit_id]).fetchall()
        == loaded.execute(tm, [both.audit_id]).fetchall()
    )
    assert [{**b, "mean_target_exposure": None} for b in both.bins] == source.bins
    assert [s["side"] for s in source.sides] == ["source"]


def test_runs_binned_by_the_references_have_gengap_without_a_tm(loaded, corpus, db_path,
                                                                  write_lines):  # fmt: skip
    hyp = write_lines("hyp.txt", [refs[0] for refs in corpus.test_refs])
    [run] = write_runs(
        loaded, [prepare_from_files(db_path, testset="test", hyp_path=hyp, model_slug="m")]
    )
    both = run_audit(loaded, "train", "test")
    target = run_audit(loaded, "train", "test", AuditConfig(side="target"))
    # The leaderboard and every other reader keep the audit of both sides.
    test_id = loaded.execute("SELECT corpus_id FROM corpora WHERE name = 'test'").fetchone()[0]
    assert choose_audit(loaded, test_id, None) == both.audit_id
    assert loaded.execute(
        "SELECT audit_id FROM leaderboard_for(NULL) WHERE run_id = ?", [run.run_id]
    ).fetchone() == (both.audit_id,)
    bins = loaded.execute(
        "SELECT bin, n_segments, mean_source_exposure, mean_target_exposure, bleu, tm_bleu "
        "FROM run_bins WHERE run_id = ? AND audit_id = ? ORDER BY bin_order",
        [run.run_id, target.audit_id],
    ).fetchall()
    assert [b[0] for b in bins] == ["all", "target_exact", "near", "medium", "far"]
    stored = dict(loaded.execute(
        "SELECT bin, count(*) FROM exposures WHERE audit_id = ? GROUP BY bin", [target.audit_id]
    ).fetchall())  # fmt: skip
    assert {b[0]: b[1] for b in bins[1:]} == {b: stored.get(b, 0) for b, *_ in bins[1:]}
    means = dict(loaded.execute(
        "SELECT bin, avg(target_exposure) FROM exposures WHERE audit_id = ? GROUP BY bin",
        [target.audit_id],
    ).fetchall())  # fmt: skip
    for name, count, mean_source, mean_target, bleu, tm_bleu in bins[1:]:
        assert mean_source is None and tm_bleu is None
        if count:
            assert mean_target == pytest.approx(means[name]) and bleu is not None
    exposure = loaded.execute(
        "SELECT audit_side, gengap_bleu, tm_gengap_bleu, target_exact_share, source_exact_share, "
        "mean_source_exposure, pairleak_085 FROM run_exposure WHERE audit_id = ?",
        [target.audit_id],
    ).fetchone()
    near = next(b for b in bins if b[0] == "near")
    far = next(b for b in bins if b[0] == "far")
    assert exposure[0] == "target" and exposure[1] == pytest.approx(near[4] - far[4])
    assert exposure[2:] == (None, stored.get("target_exact", 0) / 50, None, None, None)
    # Bin intervals need no TM: the system's come alone.
    ci = run_bin_intervals(loaded, run.run_id, target.audit_id, BootstrapSettings(200, seed=3))
    assert ci is not None
    assert ci.bins["near"][BLEU]["system"] is not None and ci.bins["near"][BLEU]["tm"] is None
    assert ci.gengap[BLEU]["system"] is not None and ci.gengap[BLEU]["exceeds_tm"] is None


def test_a_text_corpus_searches_the_side_in_its_language(run_cli, tmp_path):
    (tmp_path / "t.src").write_text("the cat sleeps\nthe dog runs\n")
    (tmp_path / "t.ref").write_text("le chat dort\nle chien court\n")
    (tmp_path / "fr.txt").write_text("hier soir le chat dort sur le lit\n")
    (tmp_path / "en.txt").write_text("every day the dog runs in the park\n")
    db = tmp_path / "w.duckdb"
    added = [
        run_cli("testset", "add", "t", "--src", tmp_path / "t.src", "--ref", tmp_path / "t.ref",
                "--src-lang", "en", "--tgt-lang", "fr", db=db),
        run_cli("corpus", "add", "fr", "--text", tmp_path / "fr.txt", "--lang", "fr", db=db),
        run_cli("corpus", "add", "en", "--text", tmp_path / "en.txt", "--lang", "en", db=db),
        run_cli("corpus", "add", "any", "--text", tmp_path / "en.txt", db=db),
    ]  # fmt: skip
    assert all(r.exit_code == 0 for r in added), [r.output for r in added]

    def audit(train, *args):
        out = run_cli("audit", "--train", train, "--testset", "t", "--json", *args, db=db)
        assert out.exit_code == 0, out.output
        return json.loads(out.stdout)

    french = audit("fr")
    assert french["side"] == "target" and [s["side"] for s in french["sides"]] == ["target"]
    target = french["sides"][0]
    assert target["max"] == 1.0  # "le chat dort" lies whole inside the French text
    english = audit("en")
    assert english["side"] == "source" and english["bins"][0]["bin"] == "source_exact"
    assert audit("any")["side"] == "both"
    assert audit("fr", "--side", "both")["side"] == "both"
    shown = run_cli("audit", "--train", "fr", "--testset", "t", db=db)
    assert "references only" in shown.stdout and "bins (by target exposure)" in shown.stdout
    assert "PairLeak" not in shown.stdout
    assert text_side("pt-BR", ("en", "pt")) == "target"
    assert text_side("de", ("en", "fr")) == "both" and text_side(None, ("en", "fr")) == "both"
    assert text_side("en", ("en", "en")) == "both"  # a same-language test set: both sides


def test_bad_sides_exit_2_and_change_nothing(run_cli, loaded, db_path):
    loaded.close()
    before = snapshot(db_path)
    bogus = run_cli("audit", "--train", "train", "--testset", "test", "--side", "pair")
    assert bogus.exit_code == 2 and "--side" in bogus.stderr
    out = db_path.parent / "tm.txt"
    tm = run_cli("tm-baseline", "--train", "train", "--testset", "test", "--side", "target",
                 "--out", out)  # fmt: skip
    assert tm.exit_code == 2 and "no TM hypotheses" in tm.stderr and not out.exists()
    assert snapshot(db_path) == before
    with pytest.raises(UsageError, match="--side"):
        AuditConfig(side="pairs")


def test_fast_mode_on_the_target_side_validates_the_target_side(loaded):
    config = AuditOptions(mode="fast", validate_sample=20, side="target").resolve(loaded)
    result = run_audit(loaded, "train", "test", config)
    assert result.validation is not None
    assert set(result.validation) == {
        "sample_size", "seed", "top1_agreement", "bin_agreement"
    }  # fmt: skip
    assert result.validation["sample_size"] == 20 and result.validation["bin_agreement"] > 0.5


def test_the_signature_names_the_index_whether_built_loaded_or_sharded(loaded):
    built = run_audit(loaded, "train", "test")
    checksum = built.signature.split("|index:xxh3:")[1]
    assert len(checksum) == 16 and int(checksum, 16) >= 0
    # The index stored by the first audit is loaded by the next one: the same index.
    loaded_again = run_audit(loaded, "train", "test", force=True)
    assert loaded_again.timings["index_loaded"] == 1.0
    assert loaded_again.signature == built.signature
    # Another layout of the same corpus reads other files; the numbers stay.
    sharded = run_audit(loaded, "train", "test", force=True, execution=Execution(shard_rows=64))
    assert sharded.signature.split("|index:xxh3:")[1] != checksum
    assert sharded.bins == built.bins and sharded.sides == built.sides
    # Sides of one index name the same index.
    target = run_audit(loaded, "train", "test", AuditConfig(side="target"))
    assert target.signature.endswith(f"|index:xxh3:{checksum}")


def test_a_report_on_the_references_alone_shows_their_bins_without_a_tm(
    loaded, corpus, db_path, write_lines, run_cli, tmp_path
):
    hyp = write_lines("hyp.txt", [refs[0] for refs in corpus.test_refs])
    [run] = write_runs(
        loaded, [prepare_from_files(db_path, testset="test", hyp_path=hyp, model_slug="m")]
    )
    target = run_audit(loaded, "train", "test", AuditConfig(side="target"))
    loaded.close()
    shown = run_cli("report", run.run_id)
    assert shown.exit_code == 0, shown.output
    assert f"audit {target.audit_id}" in shown.stdout
    assert "bins (by target exposure)" in shown.stdout and "target_exact" in shown.stdout
    assert "(no TM baseline)" in shown.stdout and "PairLeak" not in shown.stdout
    page = tmp_path / "run.html"
    html = run_cli("report", run.run_id, "--html", page)
    assert html.exit_code == 0, html.output
    text = page.read_text()
    assert "bins are by target exposure" in text and "PairLeak" not in text
    doc = json.loads(run_cli("report", run.run_id, "--json").stdout)
    assert doc["exposure"]["side"] == "target"
    assert [b["bin"] for b in doc["bins"]][:2] == ["all", "target_exact"]
    assert all(b["tm_bleu"] is None and b["tm_chrf_plus_plus"] is None for b in doc["bins"])
