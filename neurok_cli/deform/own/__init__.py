"""The object's own shape space, ``animate``'s default (docs/design.md, "The object's own
shape space"): affine handles with smooth weights over the object's material (handles,
basis), its mechanics (mechanics, elements, laws, bending, kernels), contact and air, the
implicit step and its minimizer (step, minimize, rotations, directions), the motion through
a clip (motion, samples), inverse kinematics (fit) and the reduced model as data
(reduced_model)."""
