"""Helpers behind the shared fixtures of tests/conftest.py."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The project's root directory."""
