"""Every test starts from the same random state, whatever ran before it and in whichever order.

Tests draw their inputs from their own seeded ``torch.Generator``; what still uses the global
generators (a model's initial weights, dropout) is seeded here before each test, so a test's
numbers do not depend on which tests ran before it. Hypothesis runs derandomized: the same
examples on every run and every machine."""

import random

import numpy as np
import pytest
import torch
from hypothesis import settings

settings.register_profile("deterministic", derandomize=True, database=None)
settings.load_profile("deterministic")


@pytest.fixture(autouse=True)
def seeded_global_generators():
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    yield
