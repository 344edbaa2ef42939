"""Sizes of memory (warehouse/sizes.py): one reading for every option and setting."""

from __future__ import annotations

import pytest

from warehouse.errors import UsageError
from warehouse.sizes import MAX_SIZE_BYTES, parse_size, size_text


def test_decimal_units_are_powers_of_1000_and_binary_ones_of_1024():
    assert parse_size("1.5GB") == 1_500_000_000
    assert parse_size("64MB") == 64_000_000
    assert parse_size("4GiB") == 4 * 2**30
    assert parse_size("512 mib") == 512 * 2**20
    assert parse_size("2g") == 2 * 2**30  # a single letter as docker -m reads it
    assert parse_size("1000") == 1000  # a bare number is bytes
    assert parse_size("3KB") == 3000 and parse_size("3KiB") == 3072


def test_the_stated_maximum_is_accepted_and_nothing_above_it():
    assert parse_size("1PiB") == MAX_SIZE_BYTES
    assert parse_size("1P") == MAX_SIZE_BYTES
    assert parse_size("1PB") == 10**15
    with pytest.raises(UsageError, match="at most 1 PiB"):
        parse_size("1.01PiB")


@pytest.mark.parametrize("bad", ["", "GiB", "4 parsecs", "-1GiB", "1e9", "5 MBB"])
def test_what_is_not_a_size_is_refused_naming_the_option(bad):
    with pytest.raises(UsageError, match=r"--shard-budget .*give a size such as"):
        parse_size(bad, "--shard-budget")


def test_sizes_are_written_in_the_unit_that_keeps_them_readable():
    assert size_text(512 * 2**20) == "512 MiB"
    assert size_text(3 * 2**30) == "3.00 GiB"
    assert size_text(2**50) == "1.00 PiB"


@pytest.mark.parametrize(
    "command", [["query", "SELECT 1"], ["audit", "--train", "x", "--testset", "y"]]
)
def test_every_command_reads_a_size_the_same_way(run_cli, demo_db, command):
    # 1 PiB is the largest size: accepted by the parser, so the command goes on to its own work
    # (audit then names its unknown corpus); a hair above is refused the same way by both.
    fine = run_cli(*command, "--memory-limit", "1PiB", db=demo_db)
    assert "--memory-limit" not in fine.stderr, fine.stderr
    over = run_cli(*command, "--memory-limit", "1.01PiB", db=demo_db)
    assert (
        over.exit_code == 2 and "--memory-limit 1.01PiB: more than any machine has" in over.stderr
    )
