"""NeuROK CLI: static 3D asset in, physically plausible 4D animation out."""

__version__ = "0.1.0"
