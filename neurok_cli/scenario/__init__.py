"""What a run is, shared by animate, simulate and fit: conditions, materials, presets,
placement, mass and air, joints."""
