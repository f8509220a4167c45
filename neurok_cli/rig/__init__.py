"""Articulated objects: rigid parts on hinges and sliders (rig inference, the linkage's Euler-
Lagrange motion, their animate and fit); docs/design.md, "Articulated objects in animate and
simulate"."""
