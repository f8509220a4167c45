"""Presets: what happens to an object in a run, one row a preset."""

from __future__ import annotations

DEFAULT_BEAM_PIN = "x<0.02"  # a beam's clamp when no pin is given: its -x end
