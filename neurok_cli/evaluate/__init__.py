"""Measuring a bundle: inverse kinematics, the prior and rollouts on a dataset split
(``suite``, ``run``), plausibility measures of a clip (``plausibility``, ``strain``) and
the model card (``card``). The geometry measures they share live in ``data.metrics``."""
