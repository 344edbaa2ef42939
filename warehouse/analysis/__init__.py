"""Reading the warehouse: runs, reports, leaderboard, comparisons, regressions, guarded SQL."""
