"""Curriculum on the number of in-context points (Garg et al. 2022): start short, grow by
``increment`` every ``interval`` steps up to ``end``. The paper: 11 -> 41 points, +2 every 2000
steps."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Curriculum:
    start: int = 11  # points per prompt at step 0
    end: int = 41  # points per prompt once the curriculum is done
    increment: int = 2  # points added at each stage
    interval: int = 2000  # training steps per stage

    def __post_init__(self) -> None:
        if not (1 <= self.start <= self.end):
            raise ValueError(f"curriculum needs 1 <= start <= end; got start={self.start}, end={self.end}")
        if self.increment < 1 or self.interval < 1:
            raise ValueError(f"increment and interval must be >= 1; got {self.increment}, {self.interval}")

    def points(self, step: int) -> int:
        """Points per prompt at training step ``step`` (0-based); a pure function, so resuming needs no state."""
        return min(self.end, self.start + self.increment * (step // self.interval))
