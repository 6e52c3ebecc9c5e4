"""Benchmarks: ``python -m bench [--quick]`` runs them all (see bench/README.md); each module also
runs alone as ``python -m bench.<module>``."""
