"""What the catalogue promises on disk, for the project's own tests."""
from __future__ import annotations

from pathlib import Path

from practice import catalogue

ROOT = catalogue.ROOT


def kata_for_alternative(path: Path) -> str | None:
    """graders/causal_mha/alternatives/einsum.py -> causal_mha."""
    kata = path.parent.parent.name
    return kata if path.parent.name == "alternatives" and kata in catalogue.names() else None


def alternatives() -> list[Path]:
    return [p for k in catalogue.katas() for p in k.alternatives]


def alternative_id(path: Path) -> str:
    return f"{path.parent.parent.name}-{path.stem}"
