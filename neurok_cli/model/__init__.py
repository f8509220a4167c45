"""The NeuROK model: a transformer conditional VAE of an object's deformed states.

Imports torch, numpy, safetensors and the standard library only — never I/O, CLI or data code.
"""

from .bundle import load_bundle, resolve_device, save_bundle
from .config import MODEL_SIZES, ModelConfig, model_config
from .drive import drive, farthest_point_sample, knn_weights
from .encoder import Prior
from .neurok import NeurokModel, kl_divergence
from .subspace import Subspace, active_subspace

__all__ = [
    "MODEL_SIZES",
    "ModelConfig",
    "NeurokModel",
    "Prior",
    "Subspace",
    "active_subspace",
    "drive",
    "farthest_point_sample",
    "kl_divergence",
    "knn_weights",
    "load_bundle",
    "model_config",
    "resolve_device",
    "save_bundle",
]
