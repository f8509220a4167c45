"""Pictures of motion: the renderer (moderngl, or NumPy where no GL), previews, video and the
export that dispatches by the output's format."""
