"""``animate``'s orchestration (docs/design.md, "Data flow"): load, place, choose the body's
coordinates (the object's own space in ``own/``, the learned one in ``learned/``, parts on
joints in ``rig/``), export; ``fit`` and what a run reports."""
