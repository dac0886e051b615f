#!/usr/bin/env python3
"""Loopback stand-in for the Azure endpoints the client layer talks to.

Serves, on 127.0.0.1 and a free port:
  * IMDS managed identity   GET  /metadata/identity/oauth2/token
  * Entra v2 token endpoint POST /{tenant}/oauth2/v2.0/token
  * Blob (path-style)       /blob/{account}/{container}/{name}: Put Blob,
                            Put Block, Put Block List, HEAD, GET, and
                            POST /blob/{account}/?restype=service&comp=userdelegationkey
  * ARM / Azure ML jobs     PUT/GET/DELETE .../workspaces/{ws}/jobs/{id},
                            POST .../jobs/{id}/cancel, GET .../jobs (paged),
                            long-running operation polls (Location and
                            Azure-AsyncOperation forms)
  * ARM / Azure ML assets   GET/PUT .../workspaces/{ws}/environments/{n}/versions/{v},
                            GET/PUT .../workspaces/{ws}/codes/{n}/versions/{v},
                            GET/PUT .../workspaces/{ws}/datastores/{n},
                            GET .../workspaces/{ws}/datastores[?isDefault=true]
                            (every workspace has the default datastore
                            workspaceblobstore of setting default_datastore)
  * ARM / Azure ML computes GET .../workspaces/{ws}/computes (paged by nextLink),
                            GET .../workspaces/{ws}/computes/{name}: the
                            AmlCompute resources of setting computes, with
                            their scaleSettings and nodeStateCounts
  * Azure ML data plane     GET .../workspaces/{ws} (properties.discoveryUrl),
                            GET /discovery (the "api" endpoint: this peer),
                            GET /history/v1.0/{ws id}/runs/{run}/details
                            (RunDetails: status, logFiles name -> SAS URL),
                            GET /logs/{run}/{file}?{SAS} (honours Range: 206,
                            416 past the end, 404 while a file is absent)
  * Singularity             GET /subscriptions (paged), POST Resource Graph
                            /providers/Microsoft.ResourceGraph/resources
                            (virtual clusters, paged by $skipToken), GET a
                            virtual cluster (quotas), GET .../Microsoft.Singularity/images
following the published wire formats: IMDS answers with string values,
Entra with numbers, ARM errors as {"error": {"code", "message"}}.

Tests steer it through /_peer/*:
  POST /_peer/reset            forget tokens, jobs, faults, requests, settings
  POST /_peer/config   {...}   merge settings (see DEFAULTS)
  POST /_peer/faults   [...]   queue faults; each {"path": regex, "method",
                               "times", "status", "headers", "body", "delay",
                               "drop"} answers the next matching requests;
                               with "lose_reply" the request is carried out
                               and then the connection dropped (a reply lost
                               after the service committed)
  POST /_peer/job-status {"name", "status"}  set a stored job's status
  POST /_peer/runs {name: [step, ...]}  a run's history: the n-th details GET
                               answers step min(n, last), each {"status",
                               "files": {name: content, or null for a file
                               listed before its blob exists}}; the files
                               read through their SAS URLs are the latest
                               answered step's
  GET  /_peer/jobs             the stored jobs' names
  POST /_peer/revoke           make every token issued so far invalid
  GET  /_peer/requests         every request seen (method, path, query,
                               headers with lower-case names, body)
  GET  /_peer/blob/...         a stored blob's content

With AJ_AZURE_PEER_RECORD=DIR in its environment it also writes every ARM
exchange to DIR, one file (<pid>-<n>.json) each: {"method", "path", "status",
"request": the JSON body sent or null, "response": the JSON answer or null},
for tests/azure-models/check_models.py.

Usage: azure_peer.py --port-file FILE   (the port is written once listening)
Stdlib only. Exits when its parent process goes away.
"""

import argparse
import base64
import copy
import hashlib
import json
import os
import re
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerlib import serve  # noqa: E402

ANSWERED = object()  # a handler step has already replied

DEFAULTS = {
    "token_lifetime": 3599,      # seconds, for both token endpoints
    "token_delay": 0,            # seconds the Entra endpoint waits before answering
    "imds_expires_on": None,     # absolute Unix seconds for IMDS, overrides lifetime
    "refresh_in": None,          # Entra: optional refresh_in
    "client_secret": None,       # required secret for client_credentials, if set
    "client_assertion": None,    # required assertion, if set
    "imds_client_ids": None,     # user-assigned identities IMDS knows, if set
    "page_size": 2,              # jobs per list page
    "lro_polls": 1,              # 202 answers before an operation finishes
    "lro_retry_after": "1",      # Retry-After on operation responses
    "lro_mode": "location",      # DELETE: "location" or "async"
    "lro_final": "Succeeded",    # async operation outcome
    "status_sequence": ["NotStarted", "Queued", "Running", "Completed"],
    "subscriptions": [],         # [{"subscriptionId", "state"}]
    "vcs": [],                   # [{"subscriptionId", "resourceGroup", "name", "resource": {...}}]
    "graph_page_size": 2,        # virtual clusters per Resource Graph page
    # every workspace's computes: name -> {"max", "current", "idle", "running", "preparing",
    # "unusable", "leaving", "preempted", "type", "state"} (missing counts 0)
    "computes": {},
    "computes_page_size": 2,     # computes per list page
    "images": {},                # subscription -> [image resources]
    "storage_jwt": False,        # Entra: storage-scope tokens as unsigned JWTs (for Azurite)
    # properties of each workspace's workspaceblobstore; None: no default datastore
    "default_datastore": {"datastoreType": "AzureBlob", "accountName": "wsstore",
                          "containerName": "azureml-blobstore-0000", "endpoint": "core.windows.net",
                          "protocol": "https",
                          "credentials": {"credentialsType": "AccountKey", "secrets": {"secretsType": "AccountKey"}}},
}

JOB_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9\-_]{0,254}$")
WS_RE = re.compile(r"^(/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                   r"Microsoft\.MachineLearningServices/workspaces/[^/]+)/jobs(?:/([^/]+)(/cancel)?)?$")
ASSET_RE = re.compile(r"^(/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                      r"Microsoft\.MachineLearningServices/workspaces/[^/]+)/(environments|codes)/([^/]+)/versions/([^/]+)$")
DATASTORE_RE = re.compile(r"^(/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                          r"Microsoft\.MachineLearningServices/workspaces/[^/]+)/datastores(?:/([^/]+))?$")
VC_RE = re.compile(r"^/subscriptions/([^/]+)/resourceGroups/([^/]+)/providers/"
                   r"Microsoft\.MachineLearningServices/virtualclusters/([^/]+)$", re.I)
IMAGES_RE = re.compile(r"^/subscriptions/([^/]+)/providers/Microsoft\.Singularity/images$")
WORKSPACE_RE = re.compile(r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                          r"Microsoft\.MachineLearningServices/workspaces/([^/]+)$")
COMPUTES_RE = re.compile(r"^(/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                         r"Microsoft\.MachineLearningServices/workspaces/[^/]+)/computes(?:/([^/]+))?$")
DETAILS_RE = re.compile(r"^/history/v1\.0(/subscriptions/[^/]+/resourceGroups/[^/]+/providers/"
                        r"Microsoft\.MachineLearningServices/workspaces/[^/]+)/runs/([^/]+)/details$")
LOG_SAS = "sv=2024-11-04&sr=b&sp=r&se=2099-01-01T00%3A00%3A00Z&sig=c2FzLXNlY3JldC1zaWc%3D"
OP_RE = re.compile(r"^/providers/Microsoft\.MachineLearningServices/locations/local/"
                   r"(mfeOperationResults|mfeOperationsStatus)/([0-9a-f-]+)$")


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.config = copy.deepcopy(DEFAULTS)
        self.tokens = {}      # token -> expiry (Unix seconds)
        self.jobs = {}        # name -> resource dict
        self.gets = {}        # name -> GET count (drives status_sequence)
        self.ops = {}         # id -> {"polls", "job", "kind"}
        self.blobs = {}       # path -> bytes
        self.blocks = {}      # (path, block id) -> bytes
        self.environments = {}  # ARM id -> resource (environment versions, datastores)
        self.runs = {}        # run name -> {"steps": [...], "seen": details GETs answered}
        self.faults = []
        self.requests = []
        self.counter = 0

    def issue(self, kind, lifetime):
        self.counter += 1
        tok = "eyJ0.%s.%d.%s" % (kind, self.counter, uuid.uuid4().hex)
        self.tokens[tok] = time.time() + lifetime
        return tok

    def issue_jwt(self, tenant, lifetime):
        """An unsigned JWT for storage, as Azurite's "basic" OAuth accepts it."""
        def b64(obj):
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")
        now = int(time.time())
        claims = {"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/%s/" % tenant,
                  "iat": now - 60, "nbf": now - 60, "exp": now + lifetime,
                  "oid": "5e5f1b1a-0000-4000-8000-00000000a11d", "tid": tenant}
        tok = "%s.%s.unsigned" % (b64({"alg": "RS256", "typ": "JWT"}), b64(claims))
        self.tokens[tok] = time.time() + lifetime
        return tok


STATE = State()
RECORD = os.environ.get("AJ_AZURE_PEER_RECORD")
RECORDED = {"lock": threading.Lock(), "n": 0}  # its own lock: replies are sent under STATE.lock


def system_data():
    """The systemData ARM puts on every resource it stores."""
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    return {"createdAt": now, "createdBy": "aj", "createdByType": "Application",
            "lastModifiedAt": now, "lastModifiedBy": "aj", "lastModifiedByType": "Application"}


def record(method, path, status, raw, answer):
    """One ARM exchange for the model check (AJ_AZURE_PEER_RECORD)."""
    if not RECORD or not (path == "/subscriptions" or path.startswith(("/subscriptions/", "/providers/"))):
        return
    try:
        sent = json.loads(raw) if raw else None
    except ValueError:
        sent = None
    with RECORDED["lock"]:
        RECORDED["n"] += 1
        name = os.path.join(RECORD, "%d-%05d.json" % (os.getpid(), RECORDED["n"]))
    with open(name, "w", encoding="utf-8") as f:
        json.dump({"method": method, "path": path, "status": status, "request": sent,
                   "response": answer if isinstance(answer, (dict, list)) else None}, f)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "aj-azure-peer"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing ---------------------------------------------------------
    def reply(self, status, body=None, headers=None):
        if getattr(self, "lose_reply", False):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        record(self.command, getattr(self, "arm_path", ""), status, getattr(self, "raw", b""), body)
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            ctype = "application/json; charset=utf-8"
        elif body is None:
            data, ctype = b"", None
        else:
            data, ctype = str(body).encode(), "text/plain"
        self.send_response(status)
        self.send_header("x-ms-request-id", str(uuid.uuid4()))
        if ctype and not (headers and any(k.lower() == "content-type" for k in headers)):
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)

    def arm_error(self, status, code, message, headers=None, details=None):
        err = {"code": code, "message": message}
        if details:
            err["details"] = details
        self.reply(status, {"error": err}, headers)

    def base_url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        path, query = unquote(parts.path), parse_qs(parts.query, keep_blank_values=True)
        self.q = {k: v[0] for k, v in query.items()}
        self.raw = raw
        self.lose_reply = False
        self.arm_path = path
        if path.startswith("/_peer/"):
            return self.control(path, raw)
        with STATE.lock:
            STATE.requests.append({
                "method": self.command, "path": path, "query": self.q,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": raw.decode("utf-8", "replace")})
            fault = self.take_fault(path)
        if fault is not None and fault.get("lose_reply"):
            self.lose_reply = True
        elif fault is not None:
            return self.apply_fault(fault)
        if path == "/metadata/identity/oauth2/token":
            return self.imds()
        if re.match(r"^/[^/]+/oauth2/v2\.0/token$", path):
            return self.entra()
        if path == "/subscriptions" or path.startswith(("/subscriptions/", "/providers/")):
            return self.arm(path)
        if path.startswith("/blob/"):
            return self.blob(path)
        if path == "/discovery" and self.command == "GET":
            base = self.base_url()
            return self.reply(200, {k: base for k in ("api", "catalog", "experimentation", "history",
                                                      "modelmanagement", "pipelines", "studiometadata")})
        m = DETAILS_RE.match(path)
        if m and self.command == "GET":
            return self.run_details(m.group(1), m.group(2))
        if path.startswith("/logs/") and self.command == "GET":
            return self.log_file(path[len("/logs/"):])
        self.reply(404, {"error": "not_found"})

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = handle_any

    def take_fault(self, path):
        for f in STATE.faults:
            if f.get("method") and f["method"] != self.command:
                continue
            if f.get("path") and not re.search(f["path"], path):
                continue
            f["times"] = f.get("times", 1) - 1
            if f["times"] <= 0:
                STATE.faults.remove(f)
            return f
        return None

    def apply_fault(self, f):
        if f.get("delay"):
            time.sleep(f["delay"])
        if f.get("drop"):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.reply(f.get("status", 500), f.get("body"), f.get("headers"))

    def control(self, path, raw):
        body = json.loads(raw) if raw else None
        with STATE.lock:
            if path == "/_peer/reset":
                STATE.reset()
            elif path == "/_peer/config":
                STATE.config.update(body)
            elif path == "/_peer/faults":
                STATE.faults.extend(body)
            elif path == "/_peer/job-status":
                STATE.jobs[body["name"]]["properties"]["status"] = body["status"]
            elif path == "/_peer/runs":
                for name, steps in body.items():
                    STATE.runs[name] = {"steps": steps, "seen": 0}
            elif path == "/_peer/revoke":
                STATE.tokens = {t: 0 for t in STATE.tokens}
            elif path == "/_peer/jobs":
                return self.reply(200, sorted(STATE.jobs))
            elif path == "/_peer/requests":
                return self.reply(200, STATE.requests)
            elif path.startswith("/_peer/blob/"):
                data = STATE.blobs.get(path[len("/_peer"):])
                return self.reply(200, data.decode("utf-8", "replace")) if data is not None else self.reply(404)
            else:
                return self.reply(404, {"error": "unknown control path"})
        self.reply(200, {"ok": True})

    # -- identity -----------------------------------------------------------
    def imds(self):
        if self.headers.get("Metadata") != "true":
            return self.reply(400, {"error": "invalid_request",
                                    "error_description": "Required metadata header not specified"})
        if "api-version" not in self.q:
            return self.reply(400, {"error": "invalid_request",
                                    "error_description": "Required query variable 'api-version' is missing"})
        resource = self.q.get("resource")
        if not resource:
            return self.reply(400, {"error": "invalid_resource",
                                    "error_description": "AADSTS50001: resource is required"})
        with STATE.lock:
            cfg = STATE.config
            known = cfg["imds_client_ids"]
            cid = self.q.get("client_id")
            if cid is not None and known is not None and cid not in known:
                return self.reply(400, {"error": "invalid_request",
                                        "error_description": "Identity not found"})
            lifetime = cfg["token_lifetime"]
            exp = cfg["imds_expires_on"] or int(time.time()) + lifetime
            tok = STATE.issue("imds", exp - time.time())
        now = int(time.time())
        self.reply(200, {"access_token": tok, "refresh_token": "", "expires_in": str(exp - now),
                         "expires_on": str(exp), "not_before": str(now), "resource": resource,
                         "token_type": "Bearer"})

    def entra(self):
        form = {k: v[0] for k, v in parse_qs(self.raw.decode(), keep_blank_values=True).items()}
        if form.get("grant_type") != "client_credentials" or not form.get("client_id"):
            return self.reply(400, {"error": "invalid_request",
                                    "error_description": "AADSTS900144: The request body must contain grant_type and client_id."})
        with STATE.lock:
            cfg = dict(STATE.config)
        time.sleep(cfg["token_delay"])
        if "client_assertion" in form:
            if form.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
                return self.reply(400, {"error": "invalid_request",
                                        "error_description": "AADSTS50027: Invalid client_assertion_type."})
            if cfg["client_assertion"] is not None and form["client_assertion"] != cfg["client_assertion"]:
                return self.reply(401, {"error": "invalid_client",
                                        "error_description": "AADSTS700024: Client assertion is not within its valid time range.",
                                        "error_codes": [700024]})
        elif "client_secret" in form:
            if cfg["client_secret"] is not None and form["client_secret"] != cfg["client_secret"]:
                return self.reply(401, {"error": "invalid_client",
                                        "error_description": "AADSTS7000215: Invalid client secret provided.",
                                        "error_codes": [7000215]})
        else:
            return self.reply(400, {"error": "invalid_client",
                                    "error_description": "AADSTS7000216: client_assertion or client_secret is required."})
        scope = form.get("scope", "")
        if not scope.endswith("/.default"):
            return self.reply(400, {"error": "invalid_scope",
                                    "error_description": "AADSTS70011: The provided value for the input parameter 'scope' is not valid.",
                                    "error_codes": [70011]})
        with STATE.lock:
            if cfg["storage_jwt"] and scope.startswith("https://storage.azure.com/"):
                tok = STATE.issue_jwt(self.path.split("/")[1], cfg["token_lifetime"])
            else:
                tok = STATE.issue("entra", cfg["token_lifetime"])
        body = {"token_type": "Bearer", "expires_in": cfg["token_lifetime"],
                "ext_expires_in": cfg["token_lifetime"], "access_token": tok}
        if cfg["refresh_in"] is not None:
            body["refresh_in"] = cfg["refresh_in"]
        self.reply(200, body)

    # -- ARM ------------------------------------------------------------------
    def authorized(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            self.arm_error(401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing.")
            return False
        with STATE.lock:
            exp = STATE.tokens.get(auth[7:])
        if exp is None:
            self.arm_error(401, "InvalidAuthenticationToken", "The access token is invalid.")
            return False
        if exp <= time.time():
            self.arm_error(401, "ExpiredAuthenticationToken",
                           "The access token expiry UTC time is earlier than current UTC time.")
            return False
        return True

    def arm(self, path):
        if not self.authorized():
            return
        if "api-version" not in self.q:
            return self.arm_error(400, "MissingApiVersionParameter",
                                  "The api-version query parameter (?api-version=) is required for all requests.")
        m = OP_RE.match(path)
        if m and self.command == "GET":
            return self.poll(m.group(1), m.group(2))
        if path == "/subscriptions" and self.command == "GET":
            return self.subscriptions()
        if path == "/providers/Microsoft.ResourceGraph/resources" and self.command == "POST":
            return self.resource_graph()
        m = VC_RE.match(path)
        if m and self.command == "GET":
            return self.virtual_cluster(*m.groups())
        m = IMAGES_RE.match(path)
        if m and self.command == "GET":
            with STATE.lock:
                images = STATE.config["images"].get(m.group(1), [])
            return self.reply(200, {"value": images})
        m = WORKSPACE_RE.match(path)
        if m and self.command == "GET":
            return self.reply(200, {"id": path, "name": m.group(1),
                                    "type": "Microsoft.MachineLearningServices/workspaces",
                                    "properties": {"discoveryUrl": self.base_url() + "/discovery"}})
        m = ASSET_RE.match(path)
        if m:
            return self.asset_version(path, m.group(2))
        m = DATASTORE_RE.match(path)
        if m and m.group(2) is None and self.command == "GET":
            return self.list_datastores(m.group(1))
        if m:
            return self.datastore(path)
        m = COMPUTES_RE.match(path)
        if m and self.command == "GET":
            return self.computes(m.group(1), m.group(2))
        m = WS_RE.match(path)
        if not m:
            return self.arm_error(404, "NotFound", "No route for %s %s" % (self.command, path))
        ws, name, cancel = m.group(1), m.group(2), m.group(3)
        if name is None:
            if self.command == "GET":
                return self.list_jobs(ws)
        elif cancel:
            if self.command == "POST":
                return self.cancel(name)
        elif self.command == "PUT":
            return self.put_job(ws, name)
        elif self.command == "GET":
            return self.get_job(name)
        elif self.command == "DELETE":
            return self.delete_job(name)
        self.arm_error(405, "MethodNotAllowed", "%s is not supported here" % self.command)

    # -- run history and log files --------------------------------------------
    def run_details(self, ws, name):
        if not self.authorized():
            return
        with STATE.lock:
            run = STATE.runs.get(name)
            if run is None:
                return self.arm_error(404, "UserError", "Run %s was not found" % name)
            step = run["steps"][min(run["seen"], len(run["steps"]) - 1)]
            run["seen"] += 1
            run["current"] = step
        files = {f: "%s/logs/%s/%s?%s" % (self.base_url(), name, f, LOG_SAS) for f in step.get("files", {})}
        self.reply(200, {"runId": name, "status": step["status"], "target": "cpu-cluster",
                         "logFiles": files, "warnings": [], "error": None,
                         "properties": {"azureml.runsource": "azureml.CommandJob"}})

    def log_file(self, rest):
        run_name, _, name = rest.partition("/")
        if self.q.get("sig") != "c2FzLXNlY3JldC1zaWc=" or "Authorization" in self.headers:
            return self.storage_error(403, "AuthenticationFailed", "Server failed to authenticate the request.")
        with STATE.lock:
            step = STATE.runs.get(run_name, {}).get("current") or {}
            content = step.get("files", {}).get(name)
        if content is None:
            return self.storage_error(404, "BlobNotFound", "The specified blob does not exist.")
        data = content.encode()
        m = re.match(r"^bytes=(\d+)-(\d*)$", self.headers.get("Range") or "")
        if not m:
            return self.reply_bytes(200, data, {})
        first = int(m.group(1))
        last = min(int(m.group(2)) if m.group(2) else len(data) - 1, len(data) - 1)
        if first >= len(data):
            return self.reply_bytes(416, b"", {"Content-Range": "bytes */%d" % len(data)})
        return self.reply_bytes(206, data[first:last + 1],
                                {"Content-Range": "bytes %d-%d/%d" % (first, last, len(data))})

    def reply_bytes(self, status, data, headers):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def put_job(self, ws, name):
        if not JOB_NAME.match(name):
            return self.arm_error(400, "UserError", "The job name '%s' is not valid." % name)
        try:
            body = json.loads(self.raw or b"null")
        except ValueError:
            return self.arm_error(400, "InvalidRequestContent", "The request content was invalid and could not be deserialized.")
        props = body.get("properties") if isinstance(body, dict) else None
        if not isinstance(props, dict):
            return self.arm_error(400, "UserError", "properties is required.")
        missing = []
        if "jobType" not in props:
            missing.append("jobType")
        elif props["jobType"] == "Command":
            if not props.get("command"):
                missing.append("command")
            if not props.get("environmentId"):
                missing.append("environmentId")
        elif props["jobType"] not in ("AutoML", "Sweep", "Pipeline", "Spark"):
            return self.arm_error(400, "UserError", "jobType '%s' is not supported." % props["jobType"])
        if missing:
            return self.arm_error(400, "UserError", "One or more fields are invalid.",
                                  details=[{"code": "RequiredField", "target": f,
                                            "message": "The field %s is required." % f} for f in missing])
        with STATE.lock:
            existed = name in STATE.jobs
            props = dict(props)
            props["status"] = STATE.config["status_sequence"][0]
            props["services"] = {"Studio": {"jobServiceType": "Studio",
                                            "endpoint": "https://ml.azure.com/runs/%s?wsid=%s" % (name, ws)}}
            job = {"id": "%s/jobs/%s" % (ws, name), "name": name,
                   "type": "Microsoft.MachineLearningServices/workspaces/jobs",
                   "properties": props,
                   "systemData": system_data()}
            if existed:
                job["systemData"] = STATE.jobs[name]["systemData"]
            STATE.jobs[name] = job
            STATE.gets[name] = 0
        self.reply(200 if existed else 201, job)

    def get_job(self, name):
        with STATE.lock:
            job = STATE.jobs.get(name)
            if job is None:
                return self.arm_error(404, "UserError", "Could not find job '%s'." % name)
            seq = STATE.config["status_sequence"]
            if job["properties"]["status"] == "CancelRequested":
                # the service finishes a cancel on its own: one GET later
                job["cancel_seen"] = job.get("cancel_seen", 0) + 1
                if job["cancel_seen"] > 1:
                    job["properties"]["status"] = "Canceled"
            elif job["properties"]["status"] in seq:
                STATE.gets[name] += 1
                job["properties"]["status"] = seq[min(STATE.gets[name], len(seq) - 1)]
            body = copy.deepcopy(job)
        body.pop("cancel_seen", None)
        self.reply(200, body)

    def list_jobs(self, ws):
        skip = int(self.q.get("$skipToken") or 0)
        with STATE.lock:
            names = sorted(STATE.jobs)
            size = STATE.config["page_size"]
            page = [copy.deepcopy(STATE.jobs[n]) for n in names[skip:skip + size]]
        body = {"value": page}
        if skip + size < len(names):
            body["nextLink"] = "%s%s/jobs?api-version=%s&$skipToken=%d" % (
                self.base_url(), ws, self.q["api-version"], skip + size)
        self.reply(200, body)

    def put_properties(self):
        """The properties of a PUT body, or ANSWERED once a refusal has been sent."""
        if self.command != "PUT":
            self.arm_error(405, "MethodNotAllowed", "%s is not supported here" % self.command)
            return ANSWERED
        try:
            return json.loads(self.raw or b"null")["properties"]
        except (ValueError, KeyError, TypeError):
            self.arm_error(400, "UserError", "properties is required.")
            return ANSWERED

    def asset_version(self, path, kind):
        if self.command == "GET":
            with STATE.lock:
                env = STATE.environments.get(path)
            if env is None:
                return self.arm_error(404, "UserError", "Could not find asset %s" % path)
            return self.reply(200, env)
        props = self.put_properties()
        if props is ANSWERED:
            return None
        if kind == "environments" and (not isinstance(props, dict) or not props.get("image")):
            return self.arm_error(400, "UserError", "An environment needs an image or a build context.")
        if kind == "codes" and (not isinstance(props, dict) or
                                not str(props.get("codeUri", "")).startswith("https://")):
            return self.arm_error(400, "UserError", "A code version needs a codeUri (a blob folder URL).")
        extra = {"environmentType": "UserCreated"} if kind == "environments" else {}
        with STATE.lock:
            existed = path in STATE.environments
            if existed and kind == "codes":
                return self.arm_error(409, "UserError", "Code versions are immutable: %s exists." % path)
            env = {"id": path, "name": path.rsplit("/", 1)[1],
                   "type": "Microsoft.MachineLearningServices/workspaces/%s/versions" % kind,
                   "properties": dict(props, **extra), "systemData": system_data()}
            STATE.environments[path] = env
        self.reply(200 if existed else 201, env)

    def default_datastore(self, ws):
        props = STATE.config["default_datastore"]
        if props is None:
            return None
        path = ws + "/datastores/workspaceblobstore"
        return {"id": path, "name": "workspaceblobstore",
                "type": "Microsoft.MachineLearningServices/workspaces/datastores",
                "properties": dict(props, isDefault=True), "systemData": system_data()}

    def compute_resource(self, ws, name, c):
        """A compute as ARM returns it (Microsoft's ComputeResource with AmlCompute properties)."""
        counts = {k + "NodeCount": c.get(k, 0) for k in
                  ("idle", "running", "preparing", "unusable", "leaving", "preempted")}
        return {"id": "%s/computes/%s" % (ws, name), "name": name, "location": "westus2",
                "type": "Microsoft.MachineLearningServices/workspaces/computes",
                "properties": {"computeType": c.get("type", "AmlCompute"), "computeLocation": "westus2",
                               "provisioningState": c.get("state", "Succeeded"),
                               "isAttachedCompute": False, "disableLocalAuth": True,
                               "properties": {"vmSize": "STANDARD_ND96AMSR_A100_V4", "vmPriority": "Dedicated",
                                              "scaleSettings": {"maxNodeCount": c.get("max", 0), "minNodeCount": 0,
                                                                "nodeIdleTimeBeforeScaleDown": "PT120S"},
                                              "allocationState": "Steady",
                                              "currentNodeCount": c.get("current", 0),
                                              "targetNodeCount": c.get("current", 0),
                                              "nodeStateCounts": counts}}}

    def computes(self, ws, name):
        with STATE.lock:
            computes = copy.deepcopy(STATE.config["computes"])
            size = STATE.config["computes_page_size"]
        if name is not None:
            if name not in computes:
                return self.arm_error(404, "ResourceNotFound", "Compute %s not found" % name)
            return self.reply(200, self.compute_resource(ws, name, computes[name]))
        names = sorted(computes)
        skip = int(self.q.get("$skip", "0") or 0)
        page = {"value": [self.compute_resource(ws, n, computes[n]) for n in names[skip:skip + size]]}
        if skip + size < len(names):
            page["nextLink"] = "%s%s/computes?api-version=%s&$skip=%d" % (
                self.base_url(), ws, self.q.get("api-version"), skip + size)
        self.reply(200, page)

    def list_datastores(self, ws):
        with STATE.lock:
            stores = [d for p, d in sorted(STATE.environments.items())
                      if p.startswith(ws + "/datastores/")]
            default = self.default_datastore(ws)
        if default is not None:
            stores.insert(0, default)
        if self.q.get("isDefault") == "true":
            stores = [d for d in stores if d["properties"].get("isDefault")]
        self.reply(200, {"value": stores})

    def datastore(self, path):
        if self.command == "GET":
            with STATE.lock:
                ds = STATE.environments.get(path)
                if ds is None and path.endswith("/datastores/workspaceblobstore"):
                    ds = self.default_datastore(path.rsplit("/datastores/", 1)[0])
            if ds is None:
                return self.arm_error(404, "UserError", "Could not find datastore %s" % path)
            return self.reply(200, ds)
        props = self.put_properties()
        if props is ANSWERED:
            return None
        if not isinstance(props, dict) or props.get("datastoreType") != "AzureBlob" or \
                not props.get("accountName") or not props.get("containerName") or \
                not isinstance(props.get("credentials"), dict):
            return self.arm_error(400, "UserError", "An AzureBlob datastore needs accountName, "
                                  "containerName and credentials.")
        with STATE.lock:
            existed = path in STATE.environments
            ds = {"id": path, "name": path.rsplit("/", 1)[1],
                  "type": "Microsoft.MachineLearningServices/workspaces/datastores",
                  "properties": dict(props, isDefault=False), "systemData": system_data()}
            STATE.environments[path] = ds
        self.reply(200 if existed else 201, ds)

    def subscriptions(self):
        with STATE.lock:
            subs = copy.deepcopy(STATE.config["subscriptions"])
        self.reply(200, {"value": subs})

    def resource_graph(self):
        try:
            body = json.loads(self.raw or b"null")
            query, subs = body["query"], body["subscriptions"]
        except (ValueError, KeyError, TypeError):
            return self.arm_error(400, "BadRequest", "Please provide a query and subscriptions.")
        if "microsoft.machinelearningservices/virtualclusters" not in query:
            return self.arm_error(400, "BadRequest", "The peer answers virtual cluster queries only.")
        skip = int((body.get("options") or {}).get("$skipToken") or 0)
        with STATE.lock:
            rows = [{"name": v["name"], "resourceGroup": v["resourceGroup"],
                     "subscriptionId": v["subscriptionId"]}
                    for v in sorted(STATE.config["vcs"], key=lambda v: v["name"])
                    if v["subscriptionId"] in subs]
            size = STATE.config["graph_page_size"]
        page = rows[skip:skip + size]
        out = {"totalRecords": len(rows), "count": len(page), "data": page,
               "facets": [], "resultTruncated": "false"}
        if skip + size < len(rows):
            out["$skipToken"] = str(skip + size)
        self.reply(200, out)

    def virtual_cluster(self, sub, rg, name):
        with STATE.lock:
            for v in STATE.config["vcs"]:
                if (v["subscriptionId"], v["resourceGroup"].lower(), v["name"].lower()) == \
                        (sub, rg.lower(), name.lower()):
                    res = copy.deepcopy(v.get("resource") or {})
                    break
            else:
                res = None
        if res is None:
            return self.arm_error(404, "ResourceNotFound",
                                  "The Resource 'Microsoft.MachineLearningServices/virtualclusters/%s' "
                                  "under resource group '%s' was not found." % (name, rg))
        res.setdefault("id", "/subscriptions/%s/resourceGroups/%s/providers/"
                       "Microsoft.MachineLearningServices/virtualclusters/%s" % (sub, rg, name))
        res.setdefault("name", name)
        self.reply(200, res)

    def start_op(self, name, kind):
        op = str(uuid.uuid4())
        with STATE.lock:
            STATE.ops[op] = {"polls": 0, "job": name, "kind": kind}
            mode = STATE.config["lro_mode"] if kind == "delete" else "location"
            ra = STATE.config["lro_retry_after"]
        coll = "mfeOperationsStatus" if mode == "async" else "mfeOperationResults"
        url = "%s/providers/Microsoft.MachineLearningServices/locations/local/%s/%s?api-version=%s" % (
            self.base_url(), coll, op, self.q["api-version"])
        headers = {"Retry-After": ra}
        headers["Azure-AsyncOperation" if mode == "async" else "Location"] = url
        self.reply(202, None, headers)

    def cancel(self, name):
        with STATE.lock:
            job = STATE.jobs.get(name)
            if job is None:
                return self.arm_error(404, "UserError", "Could not find job '%s'." % name)
            job["properties"]["status"] = "CancelRequested"
        self.start_op(name, "cancel")

    def delete_job(self, name):
        with STATE.lock:
            if name not in STATE.jobs:
                return self.reply(204)
        self.start_op(name, "delete")

    def poll(self, coll, op_id):
        with STATE.lock:
            op = STATE.ops.get(op_id)
            if op is None:
                return self.arm_error(404, "NotFound", "Unknown operation.")
            op["polls"] += 1
            done = op["polls"] > STATE.config["lro_polls"]
            ra = STATE.config["lro_retry_after"]
            final = STATE.config["lro_final"]
            if done and op["kind"] == "cancel" and op["job"] in STATE.jobs:
                STATE.jobs[op["job"]]["properties"]["status"] = "Canceled"
            if done and op["kind"] == "delete" and (coll == "mfeOperationResults" or final == "Succeeded"):
                STATE.jobs.pop(op["job"], None)
        if coll == "mfeOperationsStatus":
            body = {"id": "/providers/Microsoft.MachineLearningServices/locations/local/mfeOperationsStatus/" + op_id,
                    "name": op_id, "status": final if done else "InProgress",
                    "startTime": "2026-01-01T00:00:00Z"}
            if done and final != "Succeeded":
                body["error"] = {"code": "JobDeletionFailed", "message": "The job could not be deleted."}
            return self.reply(200, body, None if done else {"Retry-After": ra})
        if not done:
            return self.reply(202, None, {"Retry-After": ra})
        self.reply(200)


    # -- blob -----------------------------------------------------------------
    def storage_error(self, status, code, message):
        body = ('<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code>'
                "<Message>%s\nRequestId:%s\nTime:2026-01-01T00:00:00.0000000Z</Message></Error>"
                % (code, message, uuid.uuid4()))
        self.reply(status, body, {"x-ms-error-code": code, "Content-Type": "application/xml"})

    def blob(self, path):
        if not self.headers.get("x-ms-version"):
            return self.storage_error(400, "MissingRequiredHeader",
                                      "An HTTP header that's mandatory for this request is not specified.")
        if not self.headers.get("Authorization", "").startswith("Bearer ") and "sig" not in self.q:
            return self.storage_error(403, "AuthenticationFailed",
                                      "Server failed to authenticate the request.")
        md5 = self.headers.get("Content-MD5")
        if md5 is not None and md5 != base64.b64encode(hashlib.md5(self.raw).digest()).decode():
            return self.storage_error(400, "Md5Mismatch", "The MD5 value specified in the request did not match.")
        comp = self.q.get("comp")
        if self.command == "POST" and comp == "userdelegationkey":
            key = base64.b64encode(hashlib.sha256(b"peer-delegation-key").digest()).decode()
            start = re.search(r"<Start>([^<]*)</Start>", self.raw.decode()).group(1)
            expiry = re.search(r"<Expiry>([^<]*)</Expiry>", self.raw.decode()).group(1)
            return self.reply(200, '<?xml version="1.0" encoding="utf-8"?><UserDelegationKey>'
                              "<SignedOid>11111111-1111-1111-1111-111111111111</SignedOid>"
                              "<SignedTid>22222222-2222-2222-2222-222222222222</SignedTid>"
                              "<SignedStart>%s</SignedStart><SignedExpiry>%s</SignedExpiry>"
                              "<SignedService>b</SignedService><SignedVersion>2024-11-04</SignedVersion>"
                              "<Value>%s</Value></UserDelegationKey>" % (start, expiry, key),
                              {"Content-Type": "application/xml"})
        with STATE.lock:
            if self.command == "PUT" and comp == "block":
                STATE.blocks[(path, self.q["blockid"])] = self.raw
                return self.reply(201)
            if self.command == "PUT" and comp == "blocklist":
                ids = re.findall(r"<Latest>([^<]*)</Latest>", self.raw.decode())
                missing = [i for i in ids if (path, i) not in STATE.blocks]
                if missing:
                    return self.storage_error(400, "InvalidBlockList", "The specified block list is invalid.")
                if self.headers.get("If-None-Match") == "*" and path in STATE.blobs:
                    return self.storage_error(409, "BlobAlreadyExists", "The specified blob already exists.")
                STATE.blobs[path] = b"".join(STATE.blocks[(path, i)] for i in ids)
                return self.reply(201)
            if self.command == "PUT":
                if self.headers.get("x-ms-blob-type") != "BlockBlob":
                    return self.storage_error(400, "MissingRequiredHeader", "x-ms-blob-type is required.")
                if self.headers.get("If-None-Match") == "*" and path in STATE.blobs:
                    return self.storage_error(409, "BlobAlreadyExists", "The specified blob already exists.")
                STATE.blobs[path] = self.raw
                return self.reply(201)
            data = STATE.blobs.get(path)
        if data is None:
            return self.storage_error(404, "BlobNotFound", "The specified blob does not exist.")
        if self.command in ("GET", "HEAD"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command == "GET":
                self.wfile.write(data)
            return
        self.storage_error(405, "UnsupportedHttpVerb", "The resource doesn't support the specified HTTP verb.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    return serve(server, args.port_file)

if __name__ == "__main__":
    sys.exit(main())
