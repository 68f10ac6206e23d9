"""Utilities (the original's zeus.utils)."""
