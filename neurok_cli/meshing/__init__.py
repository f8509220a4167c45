"""Coarse meshes built from a surface, shared by the engine (``sim/``) and the object's own
space (``deform/own/``): the tetrahedral lattice inside a closed solid and its carry to the
surface (lattice), the clustered proxy of a dense surface and its turning carry (proxy)."""
