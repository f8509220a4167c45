"""Asset input and output: meshes, animated glTF, frame sequences, preview video.

Nothing here imports torch: I/O stays usable (and fast to import) without the model.
"""
