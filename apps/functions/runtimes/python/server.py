"""The python runtime server: runs a deployment's ``main(context)`` for the executor.

Runs inside the runtime container (stdlib only). Listens on port 3000; each ``POST /`` carries
one execution as JSON ``{method, path, headers, body (base64), env}`` with the container's secret
in ``x-open-runtimes-secret``, and is answered with ``{statusCode, headers, body (base64), logs,
errors}``. The code is the build output in ``/usr/local/server/src/build``; the module named by
``OPEN_RUNTIMES_ENTRYPOINT`` is imported once (a warm container reuses it) and must define
``main(context)`` (sync or async). The context follows Appwrite's open-runtimes: ``context.req``
(``method``, ``headers``, ``path``, ``query``, ``query_string``, ``body_text``, ``body_json``,
``body_binary``, ``body``; camelCase aliases too), ``context.res`` (``text``, ``json``,
``binary``, ``redirect``, ``empty``, ``send``), ``context.log`` and ``context.error``.
"""

import asyncio
import base64
import contextlib
import hmac
import importlib.util
import io
import json
import os
import sys
import traceback
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qsl

CODE = "/usr/local/server/src/build"
SECRET = os.environ.get("OPEN_RUNTIMES_SECRET", "")
_module = None


class Req:
    def __init__(self, data):
        self.method = data.get("method", "POST")
        self.headers = {k.lower(): v for k, v in (data.get("headers") or {}).items()}
        raw_path = data.get("path") or "/"
        self.path, _, self.query_string = raw_path.partition("?")
        self.query = dict(parse_qsl(self.query_string, keep_blank_values=True))
        self.body_binary = base64.b64decode(data.get("body") or "")
        self.scheme = self.headers.get("x-forwarded-proto", "http")
        self.host = self.headers.get("host", "")
        self.port = 80
        self.url = f"{self.scheme}://{self.host}{raw_path}"
        self.queryString, self.bodyBinary = self.query_string, self.body_binary

    @property
    def body_text(self):
        return self.body_binary.decode("utf-8", "replace")

    bodyText = body_raw = bodyRaw = body_text

    @property
    def body_json(self):
        return json.loads(self.body_text or "null")

    bodyJson = body_json

    @property
    def body(self):
        if self.headers.get("content-type", "").startswith("application/json"):
            return self.body_json if self.body_binary else {}
        return self.body_text


class Res:
    def binary(self, data, status_code=200, headers=None, statusCode=None):
        return {"body": bytes(data), "statusCode": statusCode or status_code, "headers": dict(headers or {})}

    def text(self, body, status_code=200, headers=None, statusCode=None):
        return self.binary(str(body).encode(), statusCode or status_code, headers)

    send = text

    def json(self, obj, status_code=200, headers=None, statusCode=None):
        out = self.text(json.dumps(obj), statusCode or status_code, headers)
        out["headers"].setdefault("content-type", "application/json")
        return out

    def empty(self):
        return self.binary(b"", 204)

    def redirect(self, url, status_code=301, headers=None, statusCode=None):
        out = self.binary(b"", statusCode or status_code, headers)
        out["headers"]["location"] = url
        return out


class Context:
    def __init__(self, data):
        self.req, self.res = Req(data), Res()
        self.logs, self.errors = [], []

    def _fmt(self, message):
        return message if isinstance(message, str) else json.dumps(message, default=str)

    def log(self, message):
        self.logs.append(self._fmt(message))

    def error(self, message):
        self.errors.append(self._fmt(message))


def load():
    global _module
    if _module is None:
        entry = os.path.join(CODE, os.environ.get("OPEN_RUNTIMES_ENTRYPOINT", "main.py"))
        for extra in (os.path.join(CODE, ".deps"), CODE, os.path.dirname(entry)):
            if extra not in sys.path:
                sys.path.insert(0, extra)
        spec = importlib.util.spec_from_file_location("function_main", entry)
        if spec is None or not os.path.isfile(entry):
            raise FileNotFoundError(f"entrypoint {os.path.basename(entry)} not found in the deployment")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if not callable(getattr(module, "main", None)):
            raise AttributeError("the entrypoint module does not define main(context)")
        _module = module
    return _module


def execute(data):
    context = Context(data)
    saved = dict(os.environ)
    os.environ.update({k: str(v) for k, v in (data.get("env") or {}).items()})
    stdout = io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout):
            result = load().main(context)
            if asyncio.iscoroutine(result):
                result = asyncio.run(result)
        if not isinstance(result, dict) or "statusCode" not in result:
            raise TypeError("main(context) must return context.res.text(), .json(), .binary(), "
                            ".redirect() or .empty()")
    except BaseException:  # the function's error: a 500 with its traceback in errors
        context.errors.append(traceback.format_exc())
        result = context.res.text("", 500)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if stdout.getvalue():
        context.logs.append(stdout.getvalue().rstrip("\n"))
    return {
        "statusCode": int(result["statusCode"]),
        "headers": {str(k).lower(): str(v) for k, v in result["headers"].items()},
        "body": base64.b64encode(result["body"]).decode(),
        "logs": "\n".join(context.logs),
        "errors": "\n".join(context.errors),
    }


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):  # readiness probe
        self._answer(200, {"ok": True})

    def do_POST(self):
        if not SECRET or not hmac.compare_digest(self.headers.get("x-open-runtimes-secret", ""), SECRET):
            return self._answer(401, {"message": "Unauthorized"})
        data = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        self._answer(200, execute(data))

    def _answer(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    HTTPServer(("0.0.0.0", 3000), Handler).serve_forever()
