"""The targets a run spec names, checked (harness/runs/admission.py asks, once per run)."""

from __future__ import annotations

import random

from interp_harness.function_store.benchmark import benchmarks
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import Target
from interp_harness.harness.domain.agent_class import SelectionError
from interp_harness.harness.domain.spec import RunSpec

__all__ = ["SelectionError", "select_targets"]  # SelectionError: where callers have found it


def _exemplar_families() -> str:
    names = [b.family for b in benchmarks() if b.exemplars]
    if not names:
        return "no registered family"
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def select_targets(spec: RunSpec, catalog: Catalog) -> list[Target]:
    """The targets a run spec names, in run order. Raises SelectionError with what is wrong."""
    from interp_harness.function_store.catalog import UnknownDataset, UnknownTarget, check_dataset
    from interp_harness.function_store.datasets import DataUnavailable

    try:
        if spec.ids:
            targets = [catalog.get(i) for i in spec.ids]
            bad = [t.id for t in targets if t.dataset != spec.dataset]
            if bad:
                raise SelectionError(f"ids not in dataset {spec.dataset!r}: {', '.join(bad[:5])}")
            unavailable = [f"{t.id} ({t.unavailable_reason})" for t in targets if not t.available]
            if unavailable:
                raise SelectionError(f"targets unavailable: {'; '.join(unavailable[:5])}")
        else:
            check_dataset(spec.dataset)
            targets = catalog.list(dataset=spec.dataset, family=spec.family, variant=spec.variant)
            targets = [t for t in targets if t.available]
    except (UnknownTarget, UnknownDataset, DataUnavailable) as e:
        raise SelectionError(str(e)) from e
    except ValueError as e:  # e.g. unknown family
        if isinstance(e, SelectionError):
            raise
        raise SelectionError(str(e)) from e
    if spec.limit is not None and spec.limit < len(targets):
        if spec.seed is None:
            targets = targets[: spec.limit]
        else:
            targets = random.Random(spec.seed).sample(targets, spec.limit)
    if not targets:
        what = ", ".join(
            f"{k}={v}"
            for k, v in (
                ("dataset", spec.dataset),
                ("family", spec.family),
                ("variant", spec.variant),
            )
            if v
        )
        raise SelectionError(f"empty selection: no available target matches {what}")
    if spec.protocol.method != "interactive":
        missing = [t.id for t in targets if not t.exemplars]
        if missing:
            raise SelectionError(
                f"method {spec.protocol.method!r} needs exemplars, but {len(missing)} selected "
                f"targets have none (e.g. {missing[0]}); exemplars exist for "
                f"{_exemplar_families()}"
            )
    return targets
