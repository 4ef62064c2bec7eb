"""Benchmarks (run as scripts: ``python -m bench.server``)."""
