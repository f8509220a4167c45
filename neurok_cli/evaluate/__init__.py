"""Measuring: accuracy metrics (pure functions) shared by training, evaluation and
benchmarks; see :mod:`neurok_cli.data.metrics`."""
