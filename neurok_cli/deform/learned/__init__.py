"""The learned latent space (``--space learned``; docs/design.md, "The learned shape space"):
the paper's encoder and decoder give a few latent coordinates, moved by the Euler-Lagrange
equations there (motion), decoded to the mesh (decode), with the body the dynamics take
(body) and the shipped bundles found by name (weights)."""
