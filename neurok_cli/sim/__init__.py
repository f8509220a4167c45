"""Physics data engine: MuJoCo scene builders, shape families, dataset generation."""
