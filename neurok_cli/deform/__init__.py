"""The deformable pipeline: a welded surface through the latent motion to frames (animate,
motion, body, fit); docs/design.md, "Data flow"."""
