"""glTF 2.0 in and out: what the rest of the package uses of it.

- :func:`write_animated`: an asset and its motions to an animated glTF/GLB (morph targets and
  a ``weights`` animation; the input's scene, materials and textures kept);
- :func:`read_animated`: positions per frame from any animated glTF;
- :func:`load_document` / :class:`GltfDocument`: the document model (pygltflib's ``GLTF2``
  with its buffers as one blob and NumPy accessors);
- :func:`first_of_ours`, :func:`animations_together`, :func:`animation_index`: which of a
  file's animations to read.

The modules behind it, by role: ``codec`` (strict JSON and GLB chunks), ``check`` (the
document's checks), ``doc``, ``scene`` (nodes and meshes to parts), ``anim``, ``parts``
(parts that ride the body), ``build`` and ``write``, ``read``. Names load on first use, so
importing one module does not import the writer.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "write_animated": "write",
    "read_animated": "read",
    "load_document": "doc",
    "GltfDocument": "doc",
    "first_of_ours": "anim",
    "animations_together": "anim",
    "animation_index": "anim",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
