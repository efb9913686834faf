"""The lab's limits, as the operator set them (HARNESS_LAB_*; docs/security.md)."""

from __future__ import annotations

from dataclasses import dataclass

from interp_harness.harness.settings import Settings

# Hard limits are enforced this much after the kernel's own timers, which interrupt a cell that
# returns to Python in time (the lab then keeps its variables).
GRACE_S = 2.0
START_TIMEOUT_S = 60.0  # a fresh lab answers `ready` within this (numpy imported)
EXPORT_TIMEOUT_S = 10.0
MAX_EXPORT_CHARS = 200_000  # a function exported as an answer's code, with what it uses
IDLE_CPU_S = 5.0  # CPU seconds the lab may use between two cells (at most a cell's own limit)


@dataclass(frozen=True)
class LabLimits:
    cell_cpu_s: float = 30.0
    cell_wall_s: float = 60.0
    memory_mb: int = 2048
    max_procs: int = 32
    tmp_mb: int = 64
    max_output_chars: int = 32_000  # each part of one cell's reply
    message_output_chars: int = 200_000  # all the cells of one agent message together
    message_figures: int = 8  # the figures all the cells of one agent message keep together
    max_calls_per_cell: int = 1000
    packages: tuple[str, ...] = ("numpy", "scipy", "matplotlib")
    max_figures: int = 4
    max_figure_kb: int = 512
    backend: str = "bwrap"  # where labs run: "bwrap" or "docker" (Settings.lab_backend)

    @classmethod
    def from_settings(cls, s: Settings) -> LabLimits:
        return cls(
            cell_cpu_s=s.lab_cell_cpu_s,
            cell_wall_s=s.lab_cell_wall_s,
            memory_mb=s.lab_memory_mb,
            max_procs=s.lab_max_procs,
            tmp_mb=s.lab_tmp_mb,
            max_output_chars=s.lab_max_output_chars,
            message_output_chars=s.lab_message_output_chars,
            message_figures=s.lab_message_figures,
            max_calls_per_cell=s.lab_max_calls_per_cell,
            packages=tuple(s.lab_package_list),
            max_figures=s.lab_max_figures,
            max_figure_kb=s.lab_max_figure_kb,
            backend=s.lab_backend,
        )


def idle_cpu_s(limits: LabLimits) -> float:
    """The CPU time the lab's process tree may use between two cells (threads or processes a
    cell left running); past it the lab is killed and the next cell starts a fresh one."""
    return min(IDLE_CPU_S, limits.cell_cpu_s)
