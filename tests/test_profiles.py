import pytest

from ssa.profiles import DEVICES, PROFILES, check_profile, resolve_device


@pytest.mark.parametrize("profile", PROFILES)
def test_known_profiles_pass(profile):
    assert check_profile(profile) == profile


def test_unknown_profile_names_the_parameter_and_choices():
    with pytest.raises(ValueError, match=r"profile must be one of smoke, cpu, paper; got 'fast'"):
        check_profile("fast")


def test_unknown_device_names_the_parameter_and_choices():
    with pytest.raises(ValueError, match=r"device must be one of auto, cpu, cuda, mps; got 'tpu'"):
        resolve_device("tpu")


def test_auto_prefers_cuda_then_mps_then_cpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device("auto") == "mps"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda"


def test_explicit_unavailable_device_is_an_error(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="device='cuda'"):
        resolve_device("cuda")
    assert resolve_device("cpu") == "cpu"
    assert set(DEVICES) == {"auto", "cpu", "cuda", "mps"}
