"""What a run's prompt cache did, read from its model requests' trace lines (foldrun/engine/cache_summary.py):
the Run page's cache line, the API's `cache`, `foldrun report`'s."""

from __future__ import annotations

from foldrun.engine.cache_summary import CacheSummary, summarise

from .models import Run, TraceEvent


def run_cache(run: Run) -> CacheSummary:
    """One query: the run's model requests' lines, summed."""
    lines = TraceEvent.objects.filter(run=run, kind="model_request").values_list("data", flat=True)
    return summarise(data for data in lines if isinstance(data, dict))
