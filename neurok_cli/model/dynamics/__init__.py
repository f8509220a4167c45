"""Lagrangian mechanics in the latent space: the equations, the compiled kernel and the
rollout; docs/design.md, "The method"."""
