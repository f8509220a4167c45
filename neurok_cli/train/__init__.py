"""Training: ``train(TrainConfig(...))`` fits a model on a 4D dataset and writes a bundle;
runs in one process or data-parallel under ``torchrun``."""

from .checkpoint import has_checkpoint, load_checkpoint, save_checkpoint
from .loop import TrainConfig, lr_at, resume_config, train, validate

__all__ = ["TrainConfig", "has_checkpoint", "load_checkpoint", "lr_at", "resume_config",
           "save_checkpoint", "train", "validate"]
