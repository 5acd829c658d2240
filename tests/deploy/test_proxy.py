"""The reverse proxy in front of the web face (deploy/nginx.conf): wired the same way in compose
and Kubernetes, its timeouts and per-address limits set, and the config run by the real nginx.

What each test pins: the one config file is what compose mounts and what both Kubernetes
ConfigMaps hold; nginx reaches the web face where the web face listens, and the web face
believes forwarded addresses from that nginx alone; nginx's limits agree with the web face's own
(a request head within the same time, the same connections per address) and leave the live
event streams unbuffered and long-lived. nginx itself (Debian's ``nginx-light``, which .ci/run
installs) checks the config and serves a real web face through it.
"""

from __future__ import annotations

import copy
import ipaddress
import json
import os
import re
import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from domino_arena.server.cli import web_serving
from domino_arena.server.cli.main import build_parser
from domino_arena.server.web.forms import FORM_PATHS
from domino_arena.server.web.live import HEARTBEAT_SECONDS
from domino_arena.server.web.sessions import MAX_FORM_BYTES
from domino_arena.server.web.uploads import MAX_UPLOAD_BYTES
from tests.fakes.processes import Process, command

ROOT: Final = Path(__file__).resolve().parents[2]
DEPLOY: Final = ROOT / "deploy"
CONF: Final = DEPLOY / "nginx.conf"
REAL_IP_CONF: Final = DEPLOY / "nginx-real-ip.conf"
MANIFESTS: Final = (DEPLOY / "k8s" / "web.yaml", DEPLOY / "k8s" / "cluster" / "web.yaml")
CONF_D: Final = "/etc/nginx/conf.d"
UPLOAD_LOCATION: Final = "^/courses/[^/]+/bots/[^/]+/versions$"
NGINX: Final = shutil.which("nginx") or (
    "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
)
needs_nginx = pytest.mark.skipif(
    NGINX is None and not os.environ.get("CI"),
    reason="nginx (Debian's nginx-light) is not installed; CI installs it",
)

# -- reading the files ----------------------------------------------------------------------


@dataclass
class Block:
    """One nginx block (``server``, ``location /api/live/``...): its directives and blocks."""

    args: tuple[str, ...] = ()
    directives: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    blocks: list[tuple[str, Block]] = field(default_factory=list)

    def values(self, name: str) -> list[tuple[str, ...]]:
        return [args for key, args in self.directives if key == name]

    def one(self, name: str) -> tuple[str, ...]:
        (found,) = self.values(name)
        return found

    def block(self, name: str, *args: str) -> Block:
        (found,) = [b for key, b in self.blocks if key == name and b.args == args]
        return found


def parse(text: str) -> Block:
    """nginx's syntax as far as our files use it: directives, blocks, quoted strings, comments."""
    tokens = re.findall(r'"(?:[^"\\]|\\.)*"|[{};]|[^\s{};"]+', re.sub(r"#[^\n]*", "", text))
    stack = [Block()]
    words: list[str] = []
    for token in tokens:
        if token == ";":
            stack[-1].directives.append((words[0], tuple(words[1:])))
            words = []
        elif token == "{":
            child = Block(tuple(words[1:]))
            stack[-1].blocks.append((words[0], child))
            stack.append(child)
            words = []
        elif token == "}":
            assert not words, f"unterminated directive {words}"
            stack.pop()
        else:
            words.append(token[1:-1] if token.startswith('"') else token)
    assert len(stack) == 1 and not words, "unbalanced braces"
    return stack[0]


@cache
def conf() -> Block:
    return parse(CONF.read_text(encoding="utf-8"))


def server() -> Block:
    return conf().block("server")


def seconds(value: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    found = re.fullmatch(r"(\d+)([smh]?)", value)
    assert found, value
    return int(found.group(1)) * units[found.group(2) or "s"]


@cache
def compose() -> dict[str, Any]:
    found = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    assert isinstance(found, dict)
    return found


def manifest(path: Path) -> dict[str, dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return {doc["kind"]: doc for doc in yaml.safe_load_all(f) if doc is not None}


def pod_container(path: Path, name: str) -> dict[str, Any]:
    pod = manifest(path)["Deployment"]["spec"]["template"]["spec"]
    (found,) = [c for c in pod["containers"] if c["name"] == name]
    assert isinstance(found, dict)
    return found


def upstream() -> tuple[str, int]:
    (address,) = conf().block("upstream", "web_face").values("server")
    host, _, port = address[0].rpartition(":")
    return host, int(port)


# -- one config, wired the same way everywhere ------------------------------------------------


def test_compose_and_kubernetes_run_this_config_with_the_same_nginx() -> None:
    proxy = compose()["services"]["proxy"]
    assert proxy["volumes"] == [f"./{CONF.name}:{CONF_D}/default.conf:ro"]
    images = {proxy["image"]}
    for path in MANIFESTS:
        objects = manifest(path)
        data = objects["ConfigMap"]["data"]
        assert data == {
            "default.conf": CONF.read_text(encoding="utf-8"),
            "real-ip.conf": REAL_IP_CONF.read_text(encoding="utf-8"),
        }, f"{path}: the ConfigMap must hold deploy/nginx*.conf word for word"
        nginx = pod_container(path, "proxy")
        images.add(nginx["image"])
        mounts = {m["mountPath"]: m["name"] for m in nginx["volumeMounts"]}
        volumes = {
            v["name"]: v for v in objects["Deployment"]["spec"]["template"]["spec"]["volumes"]
        }
        config_volume = volumes[mounts[CONF_D]]
        assert config_volume["configMap"]["name"] == objects["ConfigMap"]["metadata"]["name"]
        assert "emptyDir" in volumes[mounts["/tmp"]], "nginx's pid and buffers, root read-only"
    (image,) = images
    assert image.startswith("nginxinc/nginx-unprivileged:") and not image.endswith(":latest")


def test_nginx_listens_where_browsers_come_and_reaches_the_web_face_where_it_listens() -> None:
    (listen,) = server().values("listen")
    assert listen == ("8080",)
    host, port = upstream()
    assert host == "web"
    web = build_parser().parse_args(compose()["services"]["web"]["command"])
    assert web.port == port
    assert compose()["services"]["proxy"]["ports"] == [f"{listen[0]}:{listen[0]}"]
    for path in MANIFESTS:
        pod = manifest(path)["Deployment"]["spec"]["template"]["spec"]
        assert pod["hostAliases"] == [{"ip": "127.0.0.1", "hostnames": [host]}]
        args = build_parser().parse_args(pod_container(path, "web")["args"])
        assert (args.host, args.port) == ("127.0.0.1", port), "the pod's loopback only"
        ports = pod_container(path, "proxy")["ports"]
        assert [(p["name"], p["containerPort"]) for p in ports] == [("http", int(listen[0]))]


def test_the_web_face_believes_forwarded_addresses_from_its_proxy_alone() -> None:
    services = compose()["services"]
    (subnet,) = compose()["networks"]["default"]["ipam"]["config"]
    network = ipaddress.ip_network(subnet["subnet"])
    dynamic = ipaddress.ip_network(subnet["ip_range"])
    fixed = {
        name: ipaddress.ip_address(services[name]["networks"]["default"]["ipv4_address"])
        for name in ("proxy", "web")
    }
    for address in fixed.values():
        assert address in network and address not in dynamic, "no other service can take it"
    web = build_parser().parse_args(services["web"]["command"])
    assert web.forwarded_allow_ips == str(fixed["proxy"])
    for path in MANIFESTS:
        args = build_parser().parse_args(pod_container(path, "web")["args"])
        assert args.forwarded_allow_ips == "127.0.0.1"
    # nginx replaces the header with the address it counted: nothing a browser wrote survives.
    headers = {args[0]: args[1:] for args in server().values("proxy_set_header")}
    assert headers["X-Forwarded-For"] == ("$remote_addr",)
    assert headers["X-Forwarded-Proto"] == ("$scheme",)


# -- the limits --------------------------------------------------------------------------------


def test_nginx_times_out_slow_clients_no_later_than_the_web_face_would() -> None:
    for name in ("client_header_timeout", "client_body_timeout", "send_timeout"):
        (value,) = server().one(name)
        assert seconds(value) <= web_serving.DEFAULT_HEADER_TIMEOUT * 3, name
    (header,) = server().one("client_header_timeout")
    assert seconds(header) == web_serving.DEFAULT_HEADER_TIMEOUT
    (body,) = server().one("client_max_body_size")
    assert MAX_FORM_BYTES <= int(body.rstrip("k")) * 1024 <= 1 << 20


def test_nginx_takes_a_hosted_bot_s_upload_and_nothing_larger() -> None:
    """The upload's path (server/web/forms.py FORM_PATHS) takes the web face's own bound
    (MAX_UPLOAD_BYTES), rate limited as every page; every other body keeps the forms' bound."""
    upload = server().block("location", "~", UPLOAD_LOCATION)
    (body,) = upload.one("client_max_body_size")
    assert MAX_UPLOAD_BYTES <= int(body.rstrip("k")) * 1024 < MAX_UPLOAD_BYTES + (64 << 10)
    assert upload.values("limit_req") == server().block("location", "/").values("limit_req")
    assert re.match(UPLOAD_LOCATION, "/courses/cs101/bots/ada-bot/versions")
    assert re.search(FORM_PATHS, "/courses/cs101/bots/ada-bot/versions")


def test_nginx_caps_connections_and_requests_per_address_and_says_why() -> None:
    zones = {args[1].split("=")[1].split(":")[0]: args for args in conf().values("limit_conn_zone")}
    zones |= {args[1].split("=")[1].split(":")[0]: args for args in conf().values("limit_req_zone")}
    assert {zone[0] for zone in zones.values()} == {"$binary_remote_addr"}
    (zone, most) = server().one("limit_conn")
    assert zone in zones
    assert int(most) == web_serving.DEFAULT_MAX_PER_CLIENT, "the same cap as the web face's own"
    for path in ("/", "/api/live/"):
        (limit,) = server().block("location", path).values("limit_req")
        assert limit[0].split("=")[1] in zones and "nodelay" in limit
    assert not server().block("location", "/static/").values("limit_req")
    for status in ("429", "503"):
        page = dict((args[0], args[1]) for args in server().values("error_page"))[status]
        (returned,) = server().block("location", page).values("return")
        assert returned[0] == status and returned[1].endswith("\\n"), returned  # one line
        assert "your address" in returned[1]


def test_the_live_streams_pass_unbuffered_and_outlast_the_heartbeat() -> None:
    live = server().block("location", "/api/live/")
    assert live.one("proxy_buffering") == ("off",)
    (read,) = live.one("proxy_read_timeout")
    assert seconds(read) >= 10 * HEARTBEAT_SECONDS
    (default_read,) = server().one("proxy_read_timeout")
    assert seconds(default_read) > HEARTBEAT_SECONDS
    assert server().one("proxy_http_version") == ("1.1",)


# -- the real nginx ------------------------------------------------------------------------------


MAIN_CONF: Final = """
worker_processes 1;
pid {prefix}/nginx.pid;
error_log stderr notice;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {prefix}/client_temp;
    proxy_temp_path {prefix}/proxy_temp;
    fastcgi_temp_path {prefix}/fastcgi_temp;
    uwsgi_temp_path {prefix}/uwsgi_temp;
    scgi_temp_path {prefix}/scgi_temp;
    access_log off;
    include {prefix}/conf.d/*.conf;
}}
"""
"""What nginxinc/nginx-unprivileged's own nginx.conf does around conf.d, with paths in a test
folder (its temporary paths are under /tmp, its pid file /tmp/nginx.pid)."""


def nginx_folder(tmp_path: Path, *, real_ip: bool, web: int = 8081, port: int = 8080) -> Path:
    """A prefix folder running deploy/nginx.conf (and the real-IP file, as Kubernetes does):
    only the web face's address and nginx's port changed, so it runs beside other tests."""
    prefix = tmp_path / "nginx"
    (prefix / "conf.d").mkdir(parents=True)
    text = CONF.read_text(encoding="utf-8")
    text = text.replace("server web:8081;", f"server 127.0.0.1:{web};")
    text = text.replace("listen 8080;", f"listen 127.0.0.1:{port};")
    (prefix / "conf.d" / "default.conf").write_text(text, encoding="utf-8")
    if real_ip:
        shutil.copy(REAL_IP_CONF, prefix / "conf.d" / "real-ip.conf")
    (prefix / "nginx.conf").write_text(MAIN_CONF.format(prefix=prefix), encoding="utf-8")
    return prefix


@needs_nginx
@pytest.mark.parametrize("real_ip", [False, True], ids=["compose", "kubernetes"])
def test_nginx_accepts_the_config(tmp_path: Path, real_ip: bool) -> None:
    assert NGINX, "nginx is missing: apt-get install nginx-light"
    prefix = nginx_folder(tmp_path, real_ip=real_ip)
    done = subprocess.run(
        [NGINX, "-t", "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running(process: Process) -> Iterator[Process]:
    """``process`` until the block ends, then SIGTERM (nginx's master then stops its workers:
    a SIGKILL would leave them running), SIGKILL only if it will not stop."""
    try:
        yield process
    finally:
        process.popen.terminate()
        try:
            process.popen.wait(process.wait)
        finally:
            process.stop()


def fetch(port: int, path: str) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: arena\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@needs_nginx
def test_nginx_serves_the_web_face_through_the_config(tmp_path: Path) -> None:
    assert NGINX, "nginx is missing: apt-get install nginx-light"
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    web_args = ["web", "--db", db, "--port", "0", "--forwarded-allow-ips", "127.0.0.1"]
    with running(Process(command(*web_args), tmp_path)) as web:
        line = web.wait_line("web face on http://127.0.0.1:")
        web_port = int(line.split("127.0.0.1:", 1)[1].split("/", 1)[0])
        port = free_port()
        prefix = nginx_folder(tmp_path, real_ip=True, web=web_port, port=port)
        nginx = [NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"]
        with running(Process(nginx, tmp_path)) as proxy:
            proxy.wait_line("start worker process")
            status, body = fetch(port, "/healthz")
            assert (status, json.loads(body)) == (200, {"status": "ok"})
            # The event streams' location reaches the web face too (no referee: its 503).
            status, body = fetch(port, "/api/live/m-1/events")
            assert status == 503 and b"referee" in body, body
    assert not [line for line in web.lines if "WARNING" in line], web.lines


def test_the_cluster_web_manifest_differs_from_the_single_referees_only_where_it_must() -> None:
    """The proxy's wiring is the same in both (the full comparison is test_k8s_cluster's)."""
    single, cluster = (copy.deepcopy(manifest(path)) for path in MANIFESTS)
    for objects in (single, cluster):
        pod = objects["Deployment"]["spec"]["template"]["spec"]
        for spec in pod["containers"]:
            spec.pop("args", None)
        objects.pop("NetworkPolicy")
    assert single == cluster
