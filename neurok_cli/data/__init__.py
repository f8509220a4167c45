"""4D datasets: the on-disk format, importers of external 4D data, and training samples."""
