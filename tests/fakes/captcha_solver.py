"""A loopback stand-in for the captcha solvers capsolver, 2captcha and anti-captcha.

The three speak one documented protocol: `POST /createTask {clientKey, task: {type, websiteURL, websiteKey}}`
answers `{errorId: 0, taskId}`; `POST /getTaskResult {clientKey, taskId}` answers `{errorId: 0, status:
"processing"}` until `{status: "ready", solution: {gRecaptchaResponse | token | text}}`; a refusal is
`{errorId: 1, errorCode, errorDescription}`. The stand-in takes only its vendor's own task type names (the
others are `ERROR_TASK_NOT_SUPPORTED`), a wrong clientKey is `ERROR_KEY_DOES_NOT_EXIST`, and every task it was
given is kept in `created` so a test counts solves per page. Each answer is one `sendall` (NOTES.md).
"""

from __future__ import annotations

import json
import threading

from tests.fakes.loopback import LoopbackServer, QuietHandler

# Each vendor's own task type for each widget, as its documentation spells it.
TASK_TYPES: dict[str, dict[str, str]] = {
    "capsolver": {
        "ReCaptchaV2TaskProxyLess": "recaptcha",
        "HCaptchaTaskProxyLess": "hcaptcha",
        "AntiTurnstileTaskProxyLess": "turnstile",
        "ImageToTextTask": "image",
    },
    "2captcha": {
        "RecaptchaV2TaskProxyless": "recaptcha",
        "HCaptchaTaskProxyless": "hcaptcha",
        "TurnstileTaskProxyless": "turnstile",
        "ImageToTextTask": "image",
    },
    "anticaptcha": {
        "RecaptchaV2TaskProxyless": "recaptcha",
        "HCaptchaTaskProxyless": "hcaptcha",
        "TurnstileTaskProxyless": "turnstile",
        "ImageToTextTask": "image",
    },
}


class CaptchaSolver(LoopbackServer):
    """`vendor` is capsolver, 2captcha or anticaptcha; `key` the clientKey it accepts.

    processing  how many getTaskResult answers say "processing" before "ready" (a never-ready solver: a big number)
    refuse      (errorCode, errorDescription): createTask answers errorId 1 with them
    image_text  what an ImageToTextTask reads
    """

    __test__ = False

    def __init__(self, vendor: str = "capsolver", key: str = "CAP-key-0123456789abcdef") -> None:
        self.vendor = vendor
        self.key = key
        self.processing = 1
        self.refuse: tuple[str, str] | None = None
        self.image_text = "W7XK2"
        self.created: list[dict] = []  # every task accepted, in order
        self.requests: list[dict] = []  # every request: path and body as sent
        self.polls: dict[str, int] = {}
        self._lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, answer = outer._answer(self.path, raw)
                body = json.dumps(answer).encode()
                head = (
                    f"HTTP/1.1 {status} {'OK' if status < 400 else 'Error'}\r\ncontent-type: application/json\r\n"
                    f"content-length: {len(body)}\r\n\r\n"
                ).encode()
                self.wfile.write(head + body)  # a caller gone by now is the server's to take quietly (loopback.py)

        super().__init__(Handler)

    def token_for(self, number: int, sitekey: str) -> str:
        return f"{self.vendor}-token-{number}-{sitekey}"

    def pages_solved(self) -> list[str]:
        return [task["websiteURL"] for task in self.created if "websiteURL" in task]

    def _answer(self, path: str, raw: bytes) -> tuple[int, dict]:
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return 400, {"errorId": 1, "errorCode": "ERROR_BAD_REQUEST", "errorDescription": "not JSON"}
        with self._lock:
            self.requests.append({"path": path, "body": body})
            if body.get("clientKey") != self.key:
                return 200, {
                    "errorId": 1,
                    "errorCode": "ERROR_KEY_DOES_NOT_EXIST",
                    "errorDescription": "Account authorization key not found in the system",
                }
            if path == "/createTask":
                return 200, self._create(body.get("task") or {})
            if path == "/getTaskResult":
                return 200, self._result(str(body.get("taskId")))
            return 404, {"errorId": 1, "errorCode": "ERROR_METHOD_NOT_FOUND", "errorDescription": path}

    def _create(self, task: dict) -> dict:
        if self.refuse:
            return {"errorId": 1, "errorCode": self.refuse[0], "errorDescription": self.refuse[1]}
        kind = TASK_TYPES[self.vendor].get(str(task.get("type")))
        if kind is None:
            return {
                "errorId": 1,
                "errorCode": "ERROR_TASK_NOT_SUPPORTED",
                "errorDescription": f"{task.get('type')} is not a task type of {self.vendor}",
            }
        if kind == "image" and not task.get("body"):
            return {"errorId": 1, "errorCode": "ERROR_ZERO_CAPTCHA_FILESIZE", "errorDescription": "no image"}
        if kind != "image" and not (task.get("websiteURL") and task.get("websiteKey")):
            return {"errorId": 1, "errorCode": "ERROR_RECAPTCHA_INVALID_SITEKEY", "errorDescription": "no site key"}
        self.created.append(dict(task, kind=kind))
        task_id = str(len(self.created))
        self.polls[task_id] = 0
        return {"errorId": 0, "taskId": task_id if self.vendor == "capsolver" else int(task_id)}

    def _result(self, task_id: str) -> dict:
        if task_id not in self.polls:
            return {"errorId": 1, "errorCode": "ERROR_NO_SUCH_CAPCHA_ID", "errorDescription": "no such task"}
        self.polls[task_id] += 1
        if self.polls[task_id] <= self.processing:
            return {"errorId": 0, "status": "processing"}
        task = self.created[int(task_id) - 1]
        if task["kind"] == "image":
            return {"errorId": 0, "status": "ready", "solution": {"text": self.image_text}}
        token = self.token_for(int(task_id), task["websiteKey"])
        solution = {"token": token} if task["kind"] == "turnstile" else {"gRecaptchaResponse": token}
        return {"errorId": 0, "status": "ready", "solution": solution}
