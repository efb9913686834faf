"""Response models of the REST API (the OpenAPI document is the contract). The run and episode
views and their builders are `interp_harness.harness.runs.views`, the report `interp_harness.harness.runs.report`; their names
are here too, for the routes and the web pages.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from interp_harness.function_store.models import PublicTarget as PublicTargetOut  # noqa: F401 (re-export)
from interp_harness.harness.runs.report import (  # noqa: F401 (re-export)
    ReportOut,
    ReportUnavailable,
    build_report,
    episode_summaries,
)
from interp_harness.harness.runs.views import (  # noqa: F401 (re-export)
    PREVIEW_CHARS,
    SAFE_DETAILS,
    EpisodeDetail,
    EpisodeOut,
    EventOut,
    LabCellOut,
    MessageOut,
    MetricSummary,
    Progress,
    RunDetail,
    RunListItem,
    RunOut,
    ScoreOut,
    TargetCallOut,
    ToolCallOut,
    ToolCallRef,
    UsageOut,
    answer_url,
    call_out,
    episode_detail,
    episode_out,
    event_out,
    message_out,
    message_url,
    metric_summaries,
    public_details,
    run_detail,
    run_list_item,
    run_out,
    score_out,
)


class ErrorOut(BaseModel):
    detail: str


def _printable(value: Any) -> str | int:
    if isinstance(value, int):
        return value
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def validation_errors(errors: Any) -> list[dict[str, Any]]:
    """FastAPI's validation errors as {type, loc, msg}: the input is never echoed back."""
    return [
        {
            "type": str(e.get("type", "value_error")),
            "loc": [_printable(x) for x in e.get("loc", ())],
            "msg": _printable(e.get("msg", "")),
        }
        for e in errors
    ]


class HealthOut(BaseModel):
    status: str
    database: str
    schema_revision: str | None
    sandbox: str


class AgentOut(BaseModel):
    name: str
    provider: str
    description: str
    source: str
    target: str = ""
    tools: bool = False  # runs in protocol mode `tools` (the benchmark's commands as tools)
