"""The SERP scrapers — Google's results page, read for you: Serper, SerpApi (key in the query), DataForSEO (basic auth)."""

from __future__ import annotations

from ..errors import WebToolError
from .base import BASIC, Auth, Call, adapter, items, plain
from .query import Found, Hit, Query

TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}


@adapter(
    "search",
    "serper",
    base="https://google.serper.dev",
    auth=Auth("header", "X-API-KEY"),
    page="https://serper.dev/playground",
    matched="2026-12-01",
)
def serper(call: Call, q: Query) -> Found:
    body: dict = {"q": q.with_site, "num": min(q.count, 100), "hl": q.language}
    if q.region:
        body["gl"] = q.region.lower()
    if q.time_range:
        body["tbs"] = TBS[q.time_range]
    data = call.json("POST", "/search", json=body)
    found = Found(
        hits=[
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("link") or ""),
                snippet=plain(r.get("snippet")),
                date=r.get("date"),
            )
            for r in items(data, "organic")
        ]
    )
    box = data.get("answerBox") or {}
    if isinstance(box, dict) and (box.get("answer") or box.get("snippet")):
        found.answers.append(str(box.get("answer") or box.get("snippet")))
    return found


@adapter(
    "search",
    "serpapi",
    base="https://serpapi.com",
    auth=Auth("query", "api_key"),
    page="https://serpapi.com/search-api",
    matched="2026-12-01",
)
def serpapi(call: Call, q: Query) -> Found:
    params: dict = {"engine": "google", "q": q.with_site, "num": min(q.count, 100), "hl": q.language}
    if q.region:
        params["gl"] = q.region.lower()
    if q.time_range:
        params["tbs"] = TBS[q.time_range]
    data = call.json("GET", "/search.json", params=params)
    if isinstance(data, dict) and data.get("error") and not data.get("organic_results"):
        raise WebToolError(f"serpapi: {call.hide(str(data['error']))[:300]}")
    found = Found(
        hits=[
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("link") or ""),
                snippet=plain(r.get("snippet")),
                date=r.get("date"),
            )
            for r in items(data, "organic_results")
        ]
    )
    box = data.get("answer_box") or {}
    if isinstance(box, dict) and (box.get("answer") or box.get("snippet")):
        found.answers.append(str(box.get("answer") or box.get("snippet")))
    return found


# DataForSEO names a country by its own location code; the common ones, by ISO code.
DFS_LOCATIONS = {
    "US": 2840,
    "GB": 2826,
    "UK": 2826,
    "AU": 2036,
    "CA": 2124,
    "NZ": 2554,
    "IE": 2372,
    "DE": 2276,
    "AT": 2040,
    "CH": 2756,
    "FR": 2250,
    "ES": 2724,
    "IT": 2380,
    "NL": 2528,
    "BE": 2056,
    "SE": 2752,
    "NO": 2578,
    "DK": 2208,
    "FI": 2246,
    "PL": 2616,
    "PT": 2620,
    "BR": 2076,
    "MX": 2484,
    "AR": 2032,
    "IN": 2356,
    "JP": 2392,
    "KR": 2410,
    "SG": 2702,
    "ZA": 2710,
}


@adapter(
    "search",
    "dataforseo",
    base="https://api.dataforseo.com",
    auth=BASIC,
    page="https://docs.dataforseo.com/v3/serp/google/organic/live/advanced/",
    matched="2026-12-01",
)
def dataforseo(call: Call, q: Query) -> Found:
    task: dict = {
        "keyword": q.with_site,
        "language_code": q.language,
        "depth": min(max(q.count, 10), 100),
        "location_code": DFS_LOCATIONS.get(q.region or "US"),
    }
    if q.region and q.region not in DFS_LOCATIONS:
        raise WebToolError(
            f"dataforseo: region {q.region} has no location code here; the ones known are "
            f"{', '.join(sorted(DFS_LOCATIONS))}"
        )
    data = call.json("POST", "/v3/serp/google/organic/live/advanced", json=[task])
    tasks = items(data, "tasks")
    if tasks and int(tasks[0].get("status_code") or 20000) >= 40000:
        raise WebToolError(
            f"dataforseo refused the task: {tasks[0].get('status_message') or tasks[0].get('status_code')}"
        )
    rows = [r for r in items(data, "tasks", 0, "result", 0, "items") if r.get("type") == "organic"]
    rows.sort(key=lambda r: int(r.get("rank_group") or 0))
    return Found(
        hits=[
            Hit(title=str(r.get("title") or ""), url=str(r.get("url") or ""), snippet=plain(r.get("description")))
            for r in rows
        ]
    )
