"""What the cells of one agent message keep, all of them together (issue 49 item 7): at most
`LabLimits.message_output_chars` characters of output and `message_figures` figures. A `code`
message's cells, or every `run_python` call of one step (code-tools, Inspect's protocol code),
count together; a new step starts afresh. A short message of 20 loud cells stored 2.5 MB of
output and 40 MB of figures before."""

from __future__ import annotations

from interp_harness.harness.lab.limits import LabLimits
from interp_harness.harness.lab.session import Cell

# the order a cell's parts are kept in when the cap runs out: what explains the cell first
OUTPUT_ORDER = ("error", "value", "stdout", "stderr", "traceback")


class MessageCaps:
    """One episode's (or sample's) running totals, by step."""

    def __init__(self) -> None:
        self._chars = (-1, 0)  # (step, characters of cell output that step's cells kept)
        self._figs = (-1, 0)  # (step, figures that step's cells kept)

    def apply(self, step: int, cell: Cell, limits: LabLimits) -> list[str]:
        """Cut `cell` to what is left of its step's caps; the notes for its reply."""
        return [
            n
            for n in (self._spend(step, cell, limits), self._keep_figures(step, cell, limits))
            if n
        ]

    def _spend(self, step: int, cell: Cell, limits: LabLimits) -> str | None:
        """Cut `cell`'s parts to what is left of the message's output cap (its step's cells
        together: a `code` message, or every run_python call of a `code-tools` step) and count
        what was cut in `cell.cut`; the note for its reply when anything was cut."""
        if self._chars[0] != step:
            self._chars = (step, 0)
        cap = limits.message_output_chars
        left = max(cap - self._chars[1], 0)
        dropped = 0
        for name in OUTPUT_ORDER:
            text = getattr(cell, name)
            if not text:
                continue
            kept = text[:left]
            left -= len(kept)
            if len(kept) < len(text):
                setattr(cell, name, kept)
                cell.cut[name] = cell.cut.get(name, 0) + len(text) - len(kept)
                dropped += len(text) - len(kept)
        self._chars = (step, cap - left)
        if not dropped:
            return None
        return (
            f"Note: this message's cells reached their output cap of {cap:,} characters in all "
            f"(HARNESS_LAB_MESSAGE_OUTPUT_CHARS, set by the operator); {dropped:,} characters "
            "of this cell's output were left out (counted as cut below)."
        )

    def _keep_figures(self, step: int, cell: Cell, limits: LabLimits) -> str | None:
        """Keep `cell`'s figures within what is left of the message's figure cap (its step's
        cells together, as for the output cap): a message of 20 cells of 4 figures of 512 KB
        would otherwise store 40 MB; the note for its reply when any was left out."""
        if self._figs[0] != step:
            self._figs = (step, 0)
        cap = limits.message_figures
        left = max(cap - self._figs[1], 0)
        dropped = max(len(cell.figures) - left, 0)
        cell.figures = cell.figures[:left]
        self._figs = (step, self._figs[1] + len(cell.figures))
        if not dropped:
            return None
        return (
            f"Note: this message's cells reached their cap of {cap} figures in all "
            f"(HARNESS_LAB_MESSAGE_FIGURES, set by the operator); {dropped} figure(s) of this "
            "cell were left out."
        )
