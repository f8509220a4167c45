"""Lagrangian mechanics in the latent space (docs/design.md, "The method"): ``bodies``
(what moves: body, beam terms, environment, springs), ``equations`` (the right-hand side
and the energy books), ``steps`` (step control), ``rollout`` (integration in time, the
public :func:`~neurok_cli.model.dynamics.rollout.rollout`), and the same equations compiled:
``kernel`` (right-hand side, RK4 steps), ``kernel_terms`` (its pieces) and
``kernel_params`` (what it reads)."""
