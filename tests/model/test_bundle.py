"""Weights bundles: bit-exact round trips, checks on load, atomic saves, devices."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from neurok_cli.errors import InputError, OutputError, UsageError
from neurok_cli.model import load_bundle, resolve_device, save_bundle

from .conftest import DEVICES, make_batch, randomize_zero_inits, tiny_model


@pytest.fixture
def bundle(tmp_path) -> Path:
    model = randomize_zero_inits(tiny_model())
    return save_bundle(model, tmp_path / "run", training={"steps": 3, "data": "spheres"},
                       metrics={"rmse": 0.01, "command": "pytest"})


@pytest.mark.parametrize("device", DEVICES)
def test_round_trip_is_bit_exact(tmp_path, device):
    model = randomize_zero_inits(tiny_model())
    folder = save_bundle(model, tmp_path / "b", training={"steps": 1}, metrics={"kl": 2.0})
    assert sorted(p.name for p in folder.iterdir()) == ["MODEL_CARD.md", "config.json",
                                                        "model.safetensors"]
    loaded, config = load_bundle(folder, device=device)
    assert not loaded.training
    assert loaded.cfg == model.cfg
    original, back = model.state_dict(), loaded.state_dict()
    assert original.keys() == back.keys()
    assert all(torch.equal(original[k], back[k].cpu()) for k in original)
    assert config["format"] == "neurok-bundle" and config["version"] == 1
    assert config["training"] == {"steps": 1} and config["metrics"] == {"kl": 2.0}
    assert len(config["checksums"]["model.safetensors"]) == 64
    batch = make_batch(2, 64, 16)
    with torch.no_grad():
        want = model.eval().reconstruct(batch)
        got = loaded.reconstruct({k: v.to(device) for k, v in batch.items()}).cpu()
    if device == "cpu":
        assert torch.equal(want, got)
    else:
        torch.testing.assert_close(want, got, atol=1e-5, rtol=1e-4)


def test_model_card(bundle, tmp_path):
    assert "latent_dim: 8" in (bundle / "MODEL_CARD.md").read_text()
    custom = save_bundle(tiny_model(), tmp_path / "c", card="# mine\n")
    assert (custom / "MODEL_CARD.md").read_text() == "# mine\n"


def test_tampered_weights_are_refused(bundle):
    weights = bundle / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01
    weights.write_bytes(bytes(data))
    with pytest.raises(InputError, match="model.safetensors: sha256 does not match"):
        load_bundle(bundle)


@pytest.mark.parametrize("name", ["model.safetensors", "config.json"])
def test_missing_file(bundle, name):
    (bundle / name).unlink()
    with pytest.raises(InputError, match=f"{name}: missing"):
        load_bundle(bundle)


def test_missing_folder(tmp_path):
    with pytest.raises(InputError, match="no such weights bundle"):
        load_bundle(tmp_path / "nowhere")


@pytest.mark.parametrize("edit, message", [
    ({"version": 2}, "version 2 is not supported"),
    ({"format": "something"}, "not a neurok weights bundle"),
    ({"model": {"width": 32, "bogus": 1}}, "bad model config"),
])
def test_bad_config(bundle, edit, message):
    path = bundle / "config.json"
    config = json.loads(path.read_text())
    config.update(edit)
    path.write_text(json.dumps(config))
    with pytest.raises(InputError, match=message):
        load_bundle(bundle)


def test_unreadable_config(bundle):
    (bundle / "config.json").write_text("{not json")
    with pytest.raises(InputError, match="unreadable"):
        load_bundle(bundle)


def test_weights_of_another_model_are_refused(bundle):
    path = bundle / "config.json"
    config = json.loads(path.read_text())
    config["model"]["width"] = 64  # weights are for width 32
    path.write_text(json.dumps(config))
    with pytest.raises(InputError, match="do not fit the model"):
        load_bundle(bundle)


def test_save_replaces_a_bundle_atomically(bundle):
    other = tiny_model(seed=5)
    save_bundle(other, bundle, metrics={"second": True})
    model, config = load_bundle(bundle)
    assert config["metrics"] == {"second": True}
    assert torch.equal(model.prior_encoder.latents, other.prior_encoder.latents)
    assert [p.name for p in bundle.parent.iterdir()] == [bundle.name]  # no temporaries left


def test_save_refuses_to_clobber_other_folders(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"x")
    with pytest.raises(OutputError, match="not a neurok bundle"):
        save_bundle(tiny_model(), folder)
    with pytest.raises(OutputError, match="does not exist"):
        save_bundle(tiny_model(), tmp_path / "no" / "such")
    assert (folder / "cat.jpg").exists()


def test_failed_save_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        save_bundle(tiny_model(), tmp_path / "b", metrics={"bad": object()})
    assert list(tmp_path.iterdir()) == []


def test_no_pickle_anywhere():
    source = (Path(__file__).parents[2] / "neurok_cli" / "model" / "bundle.py").read_text()
    assert "torch.load(" not in source and "import pickle" not in source


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(UsageError, match="auto, cpu, cuda"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(UsageError, match="CUDA is not available"):
            resolve_device("cuda")


def test_model_package_imports_no_io_cli_data_or_sim():
    code = ("import sys, neurok_cli.model; "
            "bad = [m for m in sys.modules if m.split('.')[:2] in "
            "[['neurok_cli', p] for p in ('io', 'cli', 'data', 'sim', 'train', 'animate')]]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert out.stdout.strip() == "[]"
