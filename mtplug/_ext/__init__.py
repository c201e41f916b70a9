"""Compiled kernels (built from pyx/ by setup.py). Kernels take clean contiguous arrays only."""
