"""`tame-wh rescore`: stored runs scored again under other metric options (docs/cli.md)."""

from __future__ import annotations

import click

from warehouse.cli.context import (
    AppContext,
    json_option,
    metric_options,
    pass_app,
    plugin_metric_option,
    stored_interval_options,
)
from warehouse.cli.output import emit_json, say, status


def _line(result: dict[str, object]) -> str:
    """One line per run for people."""
    scores = result["scores"]
    assert isinstance(scores, dict)
    ter = "n/a" if scores["ter"] is None else f"{scores['ter']:.2f}"
    verb = "re-scored" if result["action"] == "added" else "already scored"
    condition = f"/{result['condition']}" if result["condition"] else ""
    return (
        f"{verb} {result['source_run_id']} as {result['run_id']}  {result['model_slug']}"
        f"{condition} on {result['test_set']}: BLEU {scores['bleu']:.2f} · "
        f"chrF {scores['chrf']:.2f} · TER {ter}"
    )


@click.command("rescore")
@click.argument("runs", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Every run as ingested (of --testset if given).")
@click.option("--testset", default=None, help="The test set RUNS or --all refer to.")
@stored_interval_options
@metric_options(keep=True)
@plugin_metric_option
@json_option
@pass_app
def rescore(
    app: AppContext,
    runs: tuple[str, ...],
    every: bool,
    testset: str | None,
    no_intervals: bool,
    n_bootstrap_ci: int | None,
    ci_alpha: float | None,
    seed: int | None,
    tokenize: str | None,
    lowercase: bool,
    chrf_word_order: str | None,
    no_ter: bool,
    metrics: tuple[str, ...],
    as_json: bool,
) -> None:
    """Score stored runs again from their stored hypotheses under other metric options.

    Each result is stored beside its run as a run of its own — the run a fresh `ingest` of the
    same hypotheses with these options (and --metric plugins) would store, same run id — with
    the run card, entry metrics, tags and warnings of its source; nothing stored is changed.
    Options not given keep each run's own. One transaction per run. Boards list the runs as
    ingested; `leaderboard --tokenize …` or `--metric NAME` lists these instead.
    """
    given = {"tokenize": tokenize, "chrf_word_order": chrf_word_order and int(chrf_word_order),
             "lowercase": lowercase or None, "ter": False if no_ter else None}  # fmt: skip
    changes = {name: value for name, value in given.items() if value is not None}
    with app.open("write") as wh, status("re-scoring"):
        results = wh.rescore(
            runs, every=every, testset=testset, options=changes, metrics=metrics,
            intervals=not no_intervals,
            n_bootstrap=n_bootstrap_ci, alpha=ci_alpha, seed=seed,
        )  # fmt: skip
    if as_json:
        emit_json([r.to_dict() for r in results])
        return
    if not results:
        say("no runs to re-score")
    for result in results:
        click.echo(_line(result.to_dict()))
