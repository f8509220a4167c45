"""Model configs: named sizes, dict round trips, errors that list the choices."""

from __future__ import annotations

import dataclasses
import functools

import pytest
import torch

from neurok_cli.errors import UsageError
from neurok_cli.model import MODEL_SIZES, ModelConfig, NeurokModel, model_config


def test_named_sizes_have_the_documented_shapes():
    want = {"tiny": (32, 1, 2, 16, 8), "small": (128, 2, 4, 32, 16), "base": (256, 4, 8, 64, 32)}
    for name, (width, depth, heads, tokens, k) in want.items():
        cfg = MODEL_SIZES[name]
        assert (cfg.width, cfg.depth, cfg.heads, cfg.latent_tokens, cfg.latent_dim) == \
            (width, depth, heads, tokens, k)
        assert cfg.kl_weight == 0.01


@functools.cache
def _parameters(name: str) -> int:
    with torch.device("meta"):  # counts parameters without allocating them
        return NeurokModel(MODEL_SIZES[name]).num_parameters()


def test_base_is_under_25_megabytes_of_float32():
    assert _parameters("base") * 4 < 25e6


def test_sizes_grow():
    assert _parameters("tiny") < _parameters("small") < _parameters("base")


def test_model_config_from_name_dict_and_config():
    cfg = model_config("small")
    assert cfg == MODEL_SIZES["small"] and cfg is not MODEL_SIZES["small"]
    assert model_config(dataclasses.asdict(cfg)) == cfg  # what a bundle's config.json holds
    assert ModelConfig(**dataclasses.asdict(cfg)) == cfg
    assert model_config(cfg, kl_weight=0.1).kl_weight == 0.1
    assert model_config("tiny", width=64).width == 64


def test_unknown_size_lists_the_choices():
    with pytest.raises(UsageError, match="tiny, small, base"):
        model_config("huge")


def test_unknown_field_lists_the_fields():
    with pytest.raises(UsageError, match="bogus.*valid fields are width, depth"):
        model_config({"width": 32, "bogus": 1})


@pytest.mark.parametrize("fields", [{"width": 30, "heads": 4}, {"depth": 0},
                                    {"posterior_queries": "random"}, {"dropout": 1.5},
                                    {"latent_dim": 2.5}])
def test_bad_values_are_usage_errors(fields):
    with pytest.raises(UsageError):
        model_config("tiny", **fields)


def test_defaults_are_the_base_size():
    assert ModelConfig() == MODEL_SIZES["base"]
