"""Request checks every page and API view needs before any of them reads input."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse, QueryDict


class RefuseNulMiddleware:
    """A NUL in a query or form parameter is a 400 naming the parameter.

    PostgreSQL refuses NUL in text with an error, so without this a NUL in
    any filter or form field turned into a 500 wherever it was first stored
    or compared. Reading request.POST here is what the CSRF middleware
    already does for every form post.
    """

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # Form posts to pages only: API bodies are JSON (foldrun.parsers.TextJSONParser refuses a NUL there),
        # and parsing a multipart body here would leave request.body unreadable for the inbound webhook.
        form = request.method == "POST" and not request.path.startswith("/api/")
        for params in (request.GET, request.POST if form else QueryDict()):
            for name, values in params.lists():
                if "\x00" in name or any("\x00" in value for value in values):
                    shown = name.replace("\x00", "\\0")
                    message = f"The `{shown}` parameter may not hold a NUL character."
                    if request.path.startswith("/api/"):
                        return JsonResponse(
                            {"code": "invalid", "message": message, "details": {"parameter": shown}}, status=400
                        )
                    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
