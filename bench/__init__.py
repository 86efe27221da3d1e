"""Benchmarks for Tool Result Lab: `python -m bench` (see bench/README.md).

Every figure is a ratio measured side by side in one process: the contenders
run in interleaved rounds (the order rotates each round) so drift on a shared,
noisy machine hits them alike; medians and spreads are reported, never one run.
"""
