"""The model configuration: one dataclass, written into every bundle and read back with
``ModelConfig(**d)``, and the named sizes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import UsageError

POSTERIOR_QUERIES = ("prior", "learned")


@dataclass
class ModelConfig:
    """Sizes and loss weights of :class:`~neurok_cli.model.NeurokModel` (canonical units:
    the object centred on its bounding box, largest extent 1, +Y up)."""

    width: int = 256  # transformer width D
    depth: int = 4  # self-attention blocks in each encoder; decoder blocks
    heads: int = 8  # attention heads (width must divide by it)
    latent_tokens: int = 64  # L learned latent tokens (Perceiver)
    latent_dim: int = 32  # k: size of z
    fourier_bands: int = 8  # frequencies of the positional embedding (sin/cos of x*2^i*pi)
    n_points: int = 1024  # surface samples of M0 fed to the encoders
    n_query: int = 512  # driving points per object
    kl_weight: float = 0.01  # lambda of the KL term (paper: 0.01)
    dropout: float = 0.0  # dropout in attention and MLPs (training only)
    # --- ours (defaults = "base"; see MODEL_SIZES) ---
    mlp_ratio: float = 1.5  # hidden width of every MLP, in multiples of width
    posterior_depth: int = 1  # self-attention blocks of the deformation encoder E_post
    posterior_queries: str = "prior"  # E_post queries: "prior" (prior.tokens) or "learned"
    fourier_diagonals: bool = True  # also embed along the 6 face diagonals (cross terms y*z)
    cond_dim: int = 64  # width of the z embedding that drives the decoder's adaLN
    delta_scale: float = 0.05  # displacement unit (canonical units): the loss and E_post see δ/it
    strain_weight: float = 0.0  # weight of the edge-strain term of the loss (0: the paper's)
    strain_neighbours: int = 8  # k of the query points' k-nearest-neighbour graph it uses
    # > 0: each object's loss divided by its own deformation's mean square (units of
    # delta_scale) plus relative_floor^2, so a beam's 1 % bend counts as much as a cloth's
    # fold; 0: every displacement alike (the paper's)
    relative_floor: float = 0.0
    # the decoder's head: False, a displacement per point (3 outputs); True, a rigid
    # transform per point (its displacement and a rotation vector, 6 outputs; model/rigid.py)
    # from which mesh vertices are blended
    rigid: bool = False
    rigid_weight: float = 1.0  # weight of the rotations' term of the loss (rigid head only)
    # > 0: the decoder adds a polynomial displacement field of this degree in the canonical
    # coordinates, its coefficients read from z and the object (model/smooth.py); 0: none
    smooth_degree: int = 0
    # weight of a term fitting the smooth head's field alone to the target (as the whole
    # decode is): the head then draws the smooth part and attention what is left; 0: none
    smooth_weight: float = 0.0

    def __post_init__(self) -> None:
        positive = ("width", "depth", "heads", "latent_tokens", "latent_dim", "fourier_bands",
                    "n_points", "n_query", "cond_dim", "strain_neighbours")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UsageError(f"model config: {name} must be a positive integer, got {value!r}")
        if self.posterior_depth < 0:
            raise UsageError(f"model config: posterior_depth must be >= 0, got "
                             f"{self.posterior_depth}")
        if self.width % self.heads:
            raise UsageError(f"model config: width {self.width} must be a multiple of heads "
                             f"{self.heads}")
        if self.posterior_queries not in POSTERIOR_QUERIES:
            raise UsageError(f"model config: posterior_queries must be one of "
                             f"{', '.join(POSTERIOR_QUERIES)}, got {self.posterior_queries!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise UsageError(f"model config: dropout must be in [0, 1), got {self.dropout}")
        if (self.mlp_ratio <= 0 or self.delta_scale <= 0 or self.kl_weight < 0
                or self.strain_weight < 0 or self.relative_floor < 0
                or self.rigid_weight < 0 or self.smooth_weight < 0):
            raise UsageError("model config: mlp_ratio and delta_scale must be > 0, kl_weight, "
                             "strain_weight, relative_floor, rigid_weight and smooth_weight "
                             ">= 0")
        if (not isinstance(self.smooth_degree, int) or isinstance(self.smooth_degree, bool)
                or not 0 <= self.smooth_degree <= 4):
            raise UsageError(f"model config: smooth_degree must be an integer 0-4, got "
                             f"{self.smooth_degree!r}")
        if self.smooth_weight > 0 and not self.smooth_degree:
            raise UsageError("model config: smooth_weight needs a smooth head (smooth_degree "
                             "> 0)")
        if not isinstance(self.rigid, bool):
            raise UsageError(f"model config: rigid must be true or false, got {self.rigid!r}")


MODEL_SIZES: dict[str, ModelConfig] = {
    # for tests: builds and runs in milliseconds on a CPU
    "tiny": ModelConfig(width=32, depth=1, heads=2, latent_tokens=16, latent_dim=8, cond_dim=16,
                        n_points=256, n_query=128),
    "small": ModelConfig(width=128, depth=2, heads=4, latent_tokens=32, latent_dim=16,
                         cond_dim=32),
    # the shipped size: 5.9 M parameters, 23.5 MB in float32 (the budget is 25 MB)
    "base": ModelConfig(width=256, depth=4, heads=8, latent_tokens=64, latent_dim=32),
}


def model_config(name_or_dict: str | Mapping | ModelConfig, **overrides) -> ModelConfig:
    """A fresh :class:`ModelConfig` from a size name (``MODEL_SIZES``), a dict of fields (e.g.
    the ``"model"`` entry of a bundle's config.json) or a config, with ``overrides`` applied.

    Raises :class:`~neurok_cli.errors.UsageError` naming the valid sizes or fields.
    """
    if isinstance(name_or_dict, ModelConfig):
        fields = dataclasses.asdict(name_or_dict)
    elif isinstance(name_or_dict, str):
        if name_or_dict not in MODEL_SIZES:
            raise UsageError(f"unknown model size {name_or_dict!r}; choose one of "
                             f"{', '.join(MODEL_SIZES)}")
        fields = dataclasses.asdict(MODEL_SIZES[name_or_dict])
    elif isinstance(name_or_dict, Mapping):
        fields = dict(name_or_dict)
    else:
        raise UsageError(f"model config: expected a size name or a dict, got "
                         f"{type(name_or_dict).__name__}")
    fields.update(overrides)
    return from_fields(ModelConfig, fields, "model config")


def from_fields(cls: type, fields: Mapping, what: str):
    """``cls(**fields)`` for a config dataclass; unknown fields are a
    :class:`~neurok_cli.errors.UsageError` that lists the valid ones."""
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(fields) - set(valid), key=str)
    if unknown:
        raise UsageError(f"{what}: unknown field(s) {', '.join(map(str, unknown))}; valid "
                         f"fields are {', '.join(valid)}")
    return cls(**fields)
