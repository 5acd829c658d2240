"""The deployment files agree with each other and with the code, checked without a container engine.

One port, user or variable name appears in several files (the Dockerfile, compose, Prometheus'
config, the Kubernetes manifests, the CLI); each test pins one such agreement, so changing a
port or renaming a variable in one place fails here instead of in a cluster.

Whether each file is valid on its own is the tools' job, which .ci/run runs before the tests:
promtool (prometheus.yml, alerts.yml and its unit tests in alerts_test.yml), check-jsonschema
(compose.yaml against the Compose specification), kustomize and kubernetes-validate (deploy/k8s
against the Kubernetes API's schemas). These tests check what no tool knows: that the files
agree with each other and with the code (metric names, ports, commands, variables), and that
the health probes work against a real referee and web face.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.engine import make_url

from domino_arena.server.cli.main import build_parser, main
from domino_arena.server.metrics import Metrics

ROOT: Final = Path(__file__).resolve().parents[2]
DEPLOY: Final = ROOT / "deploy"
K8S: Final = DEPLOY / "k8s"

SERVE_ENV: Final = frozenset({"DOMINO_ARENA_DB", "DOMINO_ARENA_ADMIN_TOKEN"})
"""The environment variables ``domino-arena serve`` reads: the database URL, the admin token."""

WEB_ENV: Final = frozenset({"DOMINO_ARENA_DB"})
"""The environment variable ``domino-arena web`` reads: the database URL (it needs no token)."""

GRPC_PORT: Final = 50051
METRICS_PORT: Final = 9100
WEB_PORT: Final = 8081
"""The web face's port behind its proxy (compose and Kubernetes)."""
PROXY_PORT: Final = 8080
"""nginx's port (deploy/nginx.conf): the one browsers reach."""
WEB_MANIFEST: Final = K8S / "web.yaml"

# -- reading the files ----------------------------------------------------------------------------


@dataclass
class Stage:
    """One ``FROM`` stage of a Dockerfile: its base image and its instructions in order."""

    image: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for key, args in self.instructions if key == keyword]

    def last(self, keyword: str) -> str:
        found = self.all(keyword)
        assert found, f"the stage FROM {self.image} has no {keyword}"
        return found[-1]


def dockerfile_stages(text: str) -> list[Stage]:
    """The stages of a Dockerfile: continuation lines joined, comments dropped."""
    joined = re.sub(
        r"\\\n",
        " ",
        "\n".join(line for line in text.splitlines() if not line.strip().startswith("#")),
    )
    stages: list[Stage] = []
    for line in joined.splitlines():
        if not line.strip():
            continue
        keyword, _, args = line.strip().partition(" ")
        keyword = keyword.upper()
        args = args.strip()
        if keyword == "FROM":
            words = args.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(words[0], name))
        else:
            assert stages, f"{keyword} before any FROM"
            stages[-1].instructions.append((keyword, args))
    return stages


def dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text(encoding="utf-8")


@cache
def final_stage() -> Stage:
    return dockerfile_stages(dockerfile())[-1]


def exec_form(stage: Stage, keyword: str) -> list[str]:
    """An ``ENTRYPOINT`` or ``CMD`` in exec (JSON) form: a shell form would eat SIGTERM."""
    args = stage.last(keyword)
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def exposed_ports() -> set[int]:
    return {int(p.split("/")[0]) for args in final_stage().all("EXPOSE") for p in args.split()}


def load_all(path: Path) -> list[Any]:
    with path.open(encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def load_one(path: Path) -> dict[str, Any]:
    docs = load_all(path)
    assert len(docs) == 1, f"{path.name}: expected one document, got {len(docs)}"
    assert isinstance(docs[0], dict), f"{path.name}: expected a mapping"
    return docs[0]


@cache
def k8s_objects() -> dict[str, dict[str, Any]]:
    """The referee's Kubernetes objects by kind (each kind once; the web face's are apart)."""
    objects: dict[str, dict[str, Any]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        if path.name in ("kustomization.yaml", WEB_MANIFEST.name):
            continue
        for doc in load_all(path):
            assert doc["kind"] not in objects, f"two {doc['kind']} objects"
            objects[doc["kind"]] = doc
    return objects


@cache
def k8s_web_objects() -> dict[str, dict[str, Any]]:
    """The web face's Kubernetes objects (``web.yaml``) by kind."""
    return {doc["kind"]: doc for doc in load_all(WEB_MANIFEST)}


def web_pod_container(name: str) -> dict[str, Any]:
    """A container of the web face's pod: ``web`` (the web face) or ``proxy`` (its nginx)."""
    pod = k8s_web_objects()["Deployment"]["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["web", "proxy"]
    (found,) = [c for c in pod["containers"] if c["name"] == name]
    assert isinstance(found, dict)
    return found


def web_container() -> dict[str, Any]:
    return web_pod_container("web")


def proxy_container() -> dict[str, Any]:
    return web_pod_container("proxy")


def container() -> dict[str, Any]:
    containers = k8s_objects()["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    found: dict[str, Any] = containers[0]
    return found


def container_port(name: str) -> int:
    ports = {p["name"]: p["containerPort"] for p in container()["ports"]}
    return int(ports[name])


def compose() -> dict[str, Any]:
    return load_one(DEPLOY / "compose.yaml")


# -- the image ------------------------------------------------------------------------------------


def test_the_image_is_python_3_12_slim() -> None:
    stages = dockerfile_stages((DEPLOY / "Dockerfile").read_text(encoding="utf-8"))
    assert {stage.image for stage in stages} == {"python:3.12-slim"}


def test_the_image_runs_as_a_numeric_non_root_user() -> None:
    user = final_stage().last("USER")
    uid = user.split(":")[0]
    assert uid.isdigit(), f"USER {user}: a numeric UID lets runAsNonRoot check it"
    assert int(uid) != 0
    pod = k8s_objects()["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == int(uid)


def test_the_image_exposes_the_grpc_metrics_and_web_ports() -> None:
    assert exposed_ports() == {GRPC_PORT, METRICS_PORT, WEB_PORT}


def test_entrypoint_and_cmd_are_a_valid_serve_command_line() -> None:
    entrypoint = exec_form(final_stage(), "ENTRYPOINT")
    cmd = exec_form(final_stage(), "CMD")
    assert entrypoint == ["domino-arena"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "domino-arena" in scripts["scripts"]
    args = build_parser().parse_args(cmd)
    assert args.command == "serve"
    assert args.host == "0.0.0.0"
    assert args.port == GRPC_PORT
    assert args.metrics_port == METRICS_PORT
    assert args.no_web, "compose and Kubernetes run the web face as its own service"


def test_the_image_installs_bubblewrap_for_the_hosted_bots_as_root_and_runs_without_it() -> None:
    """Debian's bubblewrap (not setuid: the user below makes an unprivileged user namespace);
    prlimit comes with util-linux, which every Debian image has (Essential)."""
    stage = final_stage()
    steps = [(i, args) for i, (key, args) in enumerate(stage.instructions) if key == "RUN"]
    (index, install) = next((i, a) for i, a in steps if "bubblewrap" in a)
    assert re.search(r"apt-get install -y --no-install-recommends bubblewrap(\s|$)", install)
    assert install.startswith("apt-get update ") and install.endswith("rm -rf /var/lib/apt/lists/*")
    (user,) = [i for i, (key, _) in enumerate(stage.instructions) if key == "USER"]
    assert index < user, "apt-get needs root: install before USER"
    build_stages = dockerfile_stages(dockerfile())[:-1]
    assert not any("bubblewrap" in run for s in build_stages for run in s.all("RUN"))


def test_the_image_copies_every_folder_the_package_is_built_from() -> None:
    """``pip install .`` in the build stage sees only what COPY brought in."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    needed = {
        "pyproject.toml",
        pyproject["project"]["readme"],
        *pyproject["project"]["license-files"],
    }
    for name in needed:
        assert (ROOT / name).is_file(), f"pyproject.toml names {name}, which is missing"
    needed |= {
        folder.split("/")[0] for folder in pyproject["tool"]["setuptools"]["package-dir"].values()
    }
    stages = dockerfile_stages((DEPLOY / "Dockerfile").read_text(encoding="utf-8"))
    copied: set[str] = set()
    for stage in stages:
        for args in stage.all("COPY"):
            if args.startswith("--from"):
                continue
            copied |= {source.rstrip("/") for source in args.split()[:-1]}
    assert needed <= copied, f"not copied into the image: {sorted(needed - copied)}"
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert not needed & ignored, f".dockerignore drops {sorted(needed & ignored)}"


# -- health checks: the image's for the referee, compose's for the web face -----------------------


def healthcheck() -> tuple[dict[str, str], list[str]]:
    """The final stage's ``HEALTHCHECK``: its options and its command (exec form)."""
    args = final_stage().last("HEALTHCHECK")
    options, separator, command = args.partition(" CMD ")
    assert separator, f"HEALTHCHECK {args}: expected HEALTHCHECK [OPTIONS] CMD [...]"
    parsed = dict(option.removeprefix("--").split("=", 1) for option in options.split())
    value = json.loads(command)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), command
    return parsed, value


@contextmanager
def serving(command: list[str], announced: str) -> Iterator[int]:
    """Run a ``domino-arena`` subcommand on a free port; yield the port it printed it serves."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from domino_arena.server.cli.main import main; main()", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    watchdog = threading.Timer(60, process.kill)  # a hung start fails the test, not the run
    watchdog.start()
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if found := re.search(rf"{announced} (?:http://)?[\w.]+:(\d+)", line):
                yield int(found.group(1))
                break
        else:
            pytest.fail(f"{command[0]} exited {process.wait()} before it said {announced!r}")
    finally:
        watchdog.cancel()
        process.terminate()
        process.wait(timeout=30)


def probe(command: list[str], default: str, address: str) -> int:
    """Run a health probe (``python -c ...``) against ``address`` instead of ``default``."""
    assert command[0] == "python"
    assert sum(default in arg for arg in command) == 1, f"the probe does not dial {default}"
    argv = [sys.executable, *(arg.replace(default, address) for arg in command[1:])]
    return subprocess.run(argv, capture_output=True, timeout=30, check=False).returncode


def test_the_image_health_check_is_exec_form_with_a_start_period() -> None:
    options, command = healthcheck()
    assert {"interval", "timeout", "start-period", "retries"} <= set(options)
    assert command[:2] == ["python", "-c"], "the image has python and grpcio, nothing else"
    services = compose()["services"]
    assert "healthcheck" not in services["referee"], "compose's referee uses the image's"
    assert services["web"]["depends_on"]["referee"]["condition"] == "service_healthy"


def test_the_image_health_check_passes_on_a_serving_referee_and_fails_without_one(
    tmp_path: Path,
) -> None:
    _, command = healthcheck()
    default = f"127.0.0.1:{GRPC_PORT}"
    serve = ["serve", "--port", "0", "--no-web", "--db", f"sqlite:///{tmp_path / 'a.db'}"]
    with serving([*serve, "--admin-token", "t"], "serving on") as port:
        assert probe(command, default, f"127.0.0.1:{port}") == 0
    assert probe(command, default, f"127.0.0.1:{port}") == 1  # gone: unhealthy, not an error


def test_the_web_health_check_passes_on_a_serving_web_face_and_fails_without_one(
    tmp_path: Path,
) -> None:
    check = compose()["services"]["web"]["healthcheck"]
    assert check["test"][0] == "CMD"
    command = check["test"][1:]
    default = f"127.0.0.1:{WEB_PORT}/healthz"
    web = ["web", "--port", "0", "--db", f"sqlite:///{tmp_path / 'a.db'}"]
    with serving(web, "web face on") as port:
        assert probe(command, default, f"127.0.0.1:{port}/healthz") == 0
    assert probe(command, default, f"127.0.0.1:{port}/healthz") == 1


# -- the serve command reads the variables the deployments set ------------------------------------


def test_serve_documents_the_environment_variables_it_reads(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--help"]) == 0
    help_text = capsys.readouterr().out
    for name in sorted(SERVE_ENV):
        assert name in help_text, f"'domino-arena serve --help' does not mention ${name}"


def domino_variables(names: Any) -> set[str]:
    return {name for name in names if name.startswith("DOMINO_ARENA_")}


# -- compose --------------------------------------------------------------------------------------


def test_compose_runs_the_referee_with_postgres_prometheus_and_grafana() -> None:
    services = compose()["services"]
    assert set(services) == {"referee", "web", "proxy", "postgres", "prometheus", "grafana"}
    build = services["referee"]["build"]
    assert (DEPLOY / build["context"]).resolve() == ROOT
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"


def test_compose_publishes_the_referees_ports_and_the_proxys_not_the_web_faces() -> None:
    services = compose()["services"]

    def published(name: str) -> set[int]:
        return {int(str(mapping).rsplit(":", 1)[-1]) for mapping in services[name].get("ports", [])}

    assert published("referee") == exposed_ports() - {WEB_PORT}
    assert published("web") == set(), "browsers reach the web face through its proxy only"
    assert published("proxy") == {PROXY_PORT}


def test_compose_runs_the_web_face_apart_on_the_same_database_following_the_referee() -> None:
    services = compose()["services"]
    web = services["web"]
    assert web["image"] == services["referee"]["image"]
    args = build_parser().parse_args(web["command"])
    assert args.command == "web"
    assert (args.host, args.port) == ("0.0.0.0", WEB_PORT)
    assert WEB_PORT in exposed_ports()
    assert args.server == f"referee:{GRPC_PORT}"
    assert (
        web["environment"]["DOMINO_ARENA_DB"]
        == services["referee"]["environment"]["DOMINO_ARENA_DB"]
    )
    assert domino_variables(web["environment"]) == WEB_ENV
    assert web["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_compose_starts_the_referee_once_postgres_is_healthy() -> None:
    services = compose()["services"]
    assert services["referee"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    postgres = services["postgres"]
    assert postgres["image"] == "postgres:16"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])


def test_compose_sets_the_variables_serve_reads_and_no_others() -> None:
    environment = compose()["services"]["referee"]["environment"]
    assert domino_variables(environment) == SERVE_ENV


def test_compose_database_url_points_at_its_postgres() -> None:
    services = compose()["services"]
    postgres_env = services["postgres"]["environment"]
    raw = services["referee"]["environment"]["DOMINO_ARENA_DB"]
    # ${VAR:-default} as compose substitutes it when VAR is unset.
    url = make_url(re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", raw))
    assert url.drivername == "postgresql"
    assert url.host == "postgres"
    assert url.port == 5432
    assert url.database == postgres_env["POSTGRES_DB"] == "arena"
    assert url.username == postgres_env["POSTGRES_USER"]
    password = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", postgres_env["POSTGRES_PASSWORD"])
    assert url.password == password


SECCOMP_OPENED: Final = frozenset({"clone", "unshare", "mount", "umount2", "pivot_root"})
"""What deploy/seccomp-bubblewrap.json allows beyond Docker's default profile (without
CAP_SYS_ADMIN): bubblewrap's namespaces, mounts and new root, each needed
(tests/deploy/test_sandbox_container.py runs it)."""


def test_compose_lets_the_referee_sandbox_hosted_bots_and_nothing_more() -> None:
    """A custom seccomp profile, AppArmor off (docker-default denies every mount), /proc
    unmasked (a masked one forbids a new /proc in a user namespace); no capability, no
    privilege to gain, never ``privileged``."""
    referee = compose()["services"]["referee"]
    options = referee["security_opt"]
    assert sorted(options) == sorted(
        [
            "seccomp=./seccomp-bubblewrap.json",
            "apparmor=unconfined",
            "systempaths=unconfined",
            "no-new-privileges=true",
        ]
    )
    assert (DEPLOY / "seccomp-bubblewrap.json").is_file()
    assert referee["cap_drop"] == ["ALL"]
    assert not {"cap_add", "privileged", "userns_mode", "pid"} & set(referee)
    assert all("security_opt" not in s for n, s in compose()["services"].items() if n != "referee")


def test_the_seccomp_profile_is_dockers_default_with_only_bubblewraps_calls_opened() -> None:
    profile = json.loads((DEPLOY / "seccomp-bubblewrap.json").read_text(encoding="utf-8"))
    assert (profile["defaultAction"], profile["defaultErrnoRet"]) == ("SCMP_ACT_ERRNO", 1)
    rules = profile["syscalls"]

    def unconditional(rule: dict[str, Any]) -> bool:
        return rule["action"] == "SCMP_ACT_ALLOW" and not {"args", "includes", "excludes"} & set(
            rule
        )

    (opened,) = [r for r in rules if unconditional(r) and "comment" in r]
    assert set(opened["names"]) == SECCOMP_OPENED
    allowed = {name for rule in rules if unconditional(rule) for name in rule["names"]}
    # What Docker keeps for CAP_SYS_ADMIN stays so, but for what bubblewrap needs.
    (admin,) = [r for r in rules if r.get("includes", {}).get("caps") == ["CAP_SYS_ADMIN"]]
    assert not SECCOMP_OPENED & set(admin["names"])
    kept = {"setns", "bpf", "clone3", "fsopen", "fsmount", "move_mount", "open_tree", "syslog"}
    assert kept <= set(admin["names"]) and not kept & allowed
    never = {"init_module", "finit_module", "kexec_load", "reboot", "ptrace", "open_by_handle_at"}
    assert not never & allowed
    # clone3 cannot be filtered by its flags: ENOSYS, so the C library falls back to clone.
    (clone3,) = [r for r in rules if r["names"] == ["clone3"]]
    assert (clone3["action"], clone3["errnoRet"]) == ("SCMP_ACT_ERRNO", 38)


def test_compose_mounts_only_files_and_folders_that_exist() -> None:
    for name in compose()["services"]:
        for target, source in compose_mounts(name).items():
            assert source.exists(), f"{name} mounts missing {source} on {target}"


# -- Prometheus -----------------------------------------------------------------------------------


def test_prometheus_scrapes_the_referee_service_on_the_metrics_port() -> None:
    config = load_one(DEPLOY / "prometheus.yml")
    (job,) = config["scrape_configs"]
    (static,) = job["static_configs"]
    assert static["targets"] == [f"referee:{METRICS_PORT}"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    assert METRICS_PORT in exposed_ports()


def test_prometheus_loads_the_alerts_from_where_compose_mounts_them() -> None:
    config = load_one(DEPLOY / "prometheus.yml")
    mounts = {
        volume.split(":")[1]: volume.split(":")[0]
        for volume in compose()["services"]["prometheus"]["volumes"]
    }
    for rule_file in config["rule_files"]:
        assert mounts.get(rule_file) == "./alerts.yml"


@cache
def exposed_series() -> dict[str, frozenset[str]]:
    """Every sample name a fresh referee's ``/metrics`` shows, with the label names it carries."""
    text = Metrics().render().decode("utf-8")
    labels: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    return {name: frozenset(names) for name, names in labels.items()}


SCRAPE_LABELS: Final = frozenset({"job", "instance", "app_kubernetes_io_name"})
"""Labels Prometheus adds to every series it scrapes from the referee (see prometheus.yml)."""


def check_query(where: str, expr: str) -> None:
    """Every ``domino_arena_*`` series ``expr`` names exists, and every label it matches on or
    groups by is one that series carries."""
    used = set(re.findall(r"\bdomino_arena_\w+", expr))
    assert used, f"{where}: names no domino_arena_ metric: {expr}"
    exposed = exposed_series()
    assert used <= set(exposed), f"{where} uses {sorted(used - set(exposed))}"
    for name, matchers in re.findall(r"\b(domino_arena_\w+)\{([^}]*)\}", expr):
        for label in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", matchers):
            assert label in exposed[name] | SCRAPE_LABELS, f"{where}: {name} has no {label}"
    carried = set().union(*(exposed[name] for name in used)) | SCRAPE_LABELS
    for grouping in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr):
        for label in (word.strip() for word in grouping.split(",") if word.strip()):
            assert label in carried, f"{where}: groups by {label}, which {sorted(used)} lack"


def alert_rules() -> list[dict[str, Any]]:
    rules = [rule for group in load_one(DEPLOY / "alerts.yml")["groups"] for rule in group["rules"]]
    assert rules
    return rules


def test_every_metric_and_label_an_alert_uses_is_one_the_referee_exposes() -> None:
    for rule in alert_rules():
        if rule["alert"] != "DominoArenaDown":  # `up` and build_info: see the test below
            check_query(rule["alert"], rule["expr"])
        assert rule["labels"]["severity"] in ("critical", "warning")
    assert "domino_arena_build_info" in exposed_series()


def test_every_alert_has_a_promtool_unit_test() -> None:
    tests = load_one(ROOT / "tests" / "deploy" / "alerts_test.yml")
    rule_files = {(ROOT / "tests" / "deploy" / f).resolve() for f in tests["rule_files"]}
    assert rule_files == {DEPLOY / "alerts.yml"}
    tested: dict[str, set[bool]] = {}
    for case in tests["tests"]:
        for check in case["alert_rule_test"]:
            tested.setdefault(check["alertname"], set()).add(bool(check["exp_alerts"]))
    for rule in alert_rules():
        assert tested.get(rule["alert"]) == {True, False}, (
            f"{rule['alert']}: alerts_test.yml must check it both firing and not firing"
        )


def test_the_down_alert_matches_the_label_every_scrape_of_the_referee_carries() -> None:
    """DominoArenaDown names no job: it matches a target label that prometheus.yml sets and
    that the Kubernetes Service's ``app.kubernetes.io/name`` becomes under a labelmap."""
    (down,) = (
        rule
        for group in load_one(DEPLOY / "alerts.yml")["groups"]
        for rule in group["rules"]
        if rule["alert"] == "DominoArenaDown"
    )
    assert "job=" not in down["expr"]
    assert "absent(" in down["expr"]
    matchers = dict(re.findall(r'\bup\{(\w+)="([^"]+)"\}', down["expr"]))
    assert matchers, f"DominoArenaDown's up{{...}} has no label matcher: {down['expr']}"
    (job,) = load_one(DEPLOY / "prometheus.yml")["scrape_configs"]
    (static,) = job["static_configs"]
    assert matchers.items() <= static["labels"].items()
    service_labels = k8s_objects()["Service"]["metadata"]["labels"]
    mapped = {re.sub(r"[^a-zA-Z0-9_]", "_", k): v for k, v in service_labels.items()}
    assert matchers.items() <= mapped.items()


# -- Grafana --------------------------------------------------------------------------------------

DASHBOARD: Final = DEPLOY / "grafana" / "dashboards" / "domino-arena.json"
GRAFANA_PROVISIONING: Final = DEPLOY / "grafana" / "provisioning"


@cache
def dashboard() -> dict[str, Any]:
    found = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(found, dict)
    return found


def dashboard_panels() -> list[dict[str, Any]]:
    return [panel for panel in dashboard()["panels"] if panel["type"] != "row"]


def dashboard_queries() -> list[tuple[str, str]]:
    """Each panel's title and each of its queries."""
    return [(panel["title"], t["expr"]) for panel in dashboard_panels() for t in panel["targets"]]


def compose_mounts(service: str) -> dict[str, Path]:
    """A compose service's bind mounts of files in deploy/: where in the container, from what."""
    mounts = {}
    for volume in compose()["services"][service].get("volumes", []):
        source, target = volume.split(":")[:2]
        if source.startswith("."):
            mounts[target] = (DEPLOY / source).resolve()
    return mounts


def test_every_query_of_the_dashboard_uses_metrics_and_labels_the_referee_exposes() -> None:
    assert dashboard_queries()
    for title, expr in dashboard_queries():
        check_query(title, expr)


def test_the_dashboard_shows_what_the_operators_watch() -> None:
    """Matches by game and outcome, active matches, think-time quantiles, faults by kind,
    connected bots and storage latency: each in at least one query."""
    queries = [expr for _, expr in dashboard_queries()]

    def shown(pattern: str) -> bool:
        return any(re.search(pattern, expr) for expr in queries)

    assert shown(r"by \(game, outcome\) \(rate\(domino_arena_matches_total\b")
    assert shown(r"domino_arena_matches_active\b")
    for quantile in ("0.5", "0.9", "0.99"):
        assert shown(rf"histogram_quantile\({quantile}, .*domino_arena_move_seconds_bucket")
    assert shown(r"by \(kind\) \(rate\(domino_arena_faults_total\b")
    assert shown(r"domino_arena_bots_connected\b")
    assert shown(r"histogram_quantile\(0.99, .*domino_arena_storage_seconds_bucket")


def test_the_dashboard_panels_are_distinct_and_read_the_datasource_variable() -> None:
    ids = [panel["id"] for panel in dashboard()["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for panel in dashboard_panels():
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "${datasource}", panel["title"]
    used = {name for _, expr in dashboard_queries() for name in re.findall(r"\$(\w+)", expr)}
    assert used - {"__rate_interval"} <= set(variables)


@pytest.mark.skipif(
    shutil.which("promtool") is None and not os.environ.get("CI"),
    reason="promtool (Debian's prometheus package) is not installed; CI installs it",
)
def test_every_query_of_the_dashboard_is_valid_promql(tmp_path: Path) -> None:
    """promtool parses each query, as a rule with Grafana's variables filled in."""
    fill = {"$__rate_interval": "5m", "$game": ".*"}
    rules = []
    for index, (_, query) in enumerate(dashboard_queries()):
        expr = query
        for variable, value in fill.items():
            expr = expr.replace(variable, value)
        rules.append({"record": f"dashboard:query_{index}", "expr": expr})
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: apt-get install prometheus"
    done = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_compose_provisions_grafana_with_its_prometheus_and_the_dashboard() -> None:
    services = compose()["services"]
    mounts = compose_mounts("grafana")
    assert "latest" not in services["grafana"]["image"]
    (datasource,) = load_one(GRAFANA_PROVISIONING / "datasources" / "prometheus.yaml")[
        "datasources"
    ]
    assert datasource["type"] == "prometheus"
    assert datasource["url"] == "http://prometheus:9090"
    assert "--web.listen-address" not in " ".join(services["prometheus"]["command"])
    (provider,) = load_one(GRAFANA_PROVISIONING / "dashboards" / "domino-arena.yaml")["providers"]
    assert provider["type"] == "file"
    assert mounts[provider["options"]["path"]] == DASHBOARD.parent
    for kind in ("datasources", "dashboards"):
        assert mounts[f"/etc/grafana/provisioning/{kind}"] == GRAFANA_PROVISIONING / kind
    home = services["grafana"]["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home == f"{provider['options']['path']}/{DASHBOARD.name}"


# -- Kubernetes -----------------------------------------------------------------------------------


REFEREE_KINDS: Final = frozenset(
    {"ConfigMap", "Secret", "Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy"}
)
WEB_KINDS: Final = frozenset(
    {"Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy", "ConfigMap"}
)
KUBERNETES_VERSION: Final = "1.27.0"
"""The oldest Kubernetes the manifests target (native gRPC probes); .ci/run validates against it."""


def test_every_kubernetes_object_is_named_and_namespace_agnostic() -> None:
    assert set(k8s_objects()) == REFEREE_KINDS
    for kind, obj in k8s_objects().items():
        assert obj["metadata"]["name"] == "domino-arena", kind
        assert "namespace" not in obj["metadata"], f"{kind} names a namespace"


def test_the_kustomization_lists_every_manifest() -> None:
    kustomization = load_one(K8S / "kustomization.yaml")
    manifests = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == manifests
    (image,) = kustomization["images"]
    assert container()["image"].split(":")[0] == image["name"]


def test_the_deployment_selects_its_pods_and_the_service_selects_them_too() -> None:
    deployment = k8s_objects()["Deployment"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert k8s_objects()["Service"]["spec"]["selector"].items() <= labels.items()


def test_the_container_ports_are_the_ones_the_image_exposes() -> None:
    assert container_port("grpc") == GRPC_PORT
    assert container_port("metrics") == METRICS_PORT
    web_port = build_parser().parse_args(web_container()["args"]).port
    assert {p["containerPort"] for p in container()["ports"]} | {web_port} == exposed_ports()
    assert "ports" not in web_container(), "the web face listens on the pod's loopback only"


@pytest.mark.parametrize("probe", ["startupProbe", "readinessProbe", "livenessProbe"])
def test_every_probe_is_a_native_grpc_health_check_on_the_served_port(probe: str) -> None:
    """The referee serves grpc.health.v1; Kubernetes' ``grpc:`` probe asks it directly."""
    check = container()[probe]
    assert set(check) & {"grpc", "httpGet", "tcpSocket", "exec"} == {"grpc"}
    assert check["grpc"]["port"] == container_port("grpc")
    service_ports = {p["name"]: p for p in k8s_objects()["Service"]["spec"]["ports"]}
    assert service_ports["grpc"]["targetPort"] in ("grpc", check["grpc"]["port"])


def test_the_service_exposes_grpc_and_metrics_with_scrape_annotations() -> None:
    service = k8s_objects()["Service"]
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    assert set(ports) == {"grpc", "metrics"}
    for name, port in ports.items():
        target = port["targetPort"]
        assert (container_port(target) if isinstance(target, str) else target) == container_port(
            name
        )
    assert ports["grpc"]["port"] == GRPC_PORT
    annotations = service["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == ports["metrics"]["port"] == METRICS_PORT
    assert annotations["prometheus.io/path"] == "/metrics"


def test_the_pod_runs_as_non_root_without_privileges() -> None:
    pod = k8s_objects()["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    security = container()["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"]["drop"] == ["ALL"]


def test_the_container_requests_resources_and_caps_memory() -> None:
    resources = container()["resources"]
    assert {"cpu", "memory"} <= set(resources["requests"])
    assert "memory" in resources["limits"]
    # A CPU limit would throttle the referee and its clock would charge the bots for it.
    assert "cpu" not in resources["limits"]


def test_the_deployment_sets_the_variables_serve_reads_and_no_others() -> None:
    env = container()["env"]
    assert domino_variables(variable["name"] for variable in env) == SERVE_ENV


def test_the_deployment_variables_come_from_the_configmap_and_secret() -> None:
    """Every ``$(VAR)`` is defined before use, every secret key exists, and the URL parses."""
    configmap = k8s_objects()["ConfigMap"]
    secret = k8s_objects()["Secret"]
    (source,) = container()["envFrom"]
    assert source["configMapRef"]["name"] == configmap["metadata"]["name"]
    values: dict[str, str] = dict(configmap["data"])
    for variable in container()["env"]:
        if "valueFrom" in variable:
            ref = variable["valueFrom"]["secretKeyRef"]
            assert ref["name"] == secret["metadata"]["name"]
            values[variable["name"]] = secret["stringData"][ref["key"]]
            continue
        text = variable["value"]
        for name in re.findall(r"\$\((\w+)\)", text):
            assert name in values, f"{variable['name']} uses $({name}) before it is defined"
        values[variable["name"]] = re.sub(r"\$\((\w+)\)", lambda m: values[m.group(1)], text)
    url = make_url(values["DOMINO_ARENA_DB"])
    assert url.drivername == "postgresql"
    assert url.host == configmap["data"]["DB_HOST"]
    assert url.database == configmap["data"]["DB_NAME"]
    assert url.password == secret["stringData"]["DB_PASSWORD"]


def test_the_secret_holds_only_marked_placeholders() -> None:
    """A real token or password must never be committed: the file ships placeholders only."""
    secret = k8s_objects()["Secret"]
    assert "data" not in secret
    assert set(secret["stringData"]) == {"DOMINO_ARENA_ADMIN_TOKEN", "DB_PASSWORD"}
    for key, placeholder in secret["stringData"].items():
        assert placeholder.startswith("CHANGE-ME"), f"{key} is not a placeholder"


@pytest.mark.parametrize(
    "path",
    sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml"),
    ids=lambda p: p.name,
)
def test_every_manifest_validates_against_the_kubernetes_schemas(path: Path) -> None:
    """The same check .ci/run makes of the rendered kustomization, file by file, without kubectl."""
    for doc in load_all(path):
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{path.name}: {doc['kind']} {doc['metadata']['name']}: {error.message}")


def project_version() -> str:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(version["version"])


def test_every_image_of_the_project_is_pinned_to_its_version() -> None:
    """No ``latest``: a rollout or a restart runs the release it was given, not a moved tag."""
    images = [container()["image"], web_container()["image"]]
    images += [
        service["image"]
        for service in compose()["services"].values()
        if service.get("image", "").startswith("domino-arena")
    ]
    assert len(images) == 4
    assert set(images) == {f"domino-arena:{project_version()}"}
    (image,) = load_one(K8S / "kustomization.yaml")["images"]
    assert image["newTag"] == project_version()
    for service in compose()["services"].values():
        assert not service["image"].endswith(":latest"), service["image"]
        assert ":" in service["image"], f"{service['image']} names no tag"


def test_the_disruption_budgets_select_their_pods_and_let_the_web_face_drain() -> None:
    for objects in (k8s_objects(), k8s_web_objects()):
        budget = objects["PodDisruptionBudget"]["spec"]
        deployment = objects["Deployment"]["spec"]
        assert budget["selector"] == deployment["selector"]
        assert budget["minAvailable"] == 1
    # The referee's single replica waits for its operator; the web face loses one pod at a time.
    assert k8s_objects()["Deployment"]["spec"]["replicas"] == 1
    assert k8s_objects()["PodDisruptionBudget"]["spec"]["unhealthyPodEvictionPolicy"] == (
        "AlwaysAllow"
    )
    assert k8s_web_objects()["Deployment"]["spec"]["replicas"] > 1


def allowed_ports(rules: list[dict[str, Any]]) -> set[int | str]:
    return {port["port"] for rule in rules for port in rule["ports"]}


def test_the_network_policies_admit_what_the_pods_serve_and_reach_what_they_need() -> None:
    db_port = int(k8s_objects()["ConfigMap"]["data"]["DB_PORT"])
    referee_labels = k8s_objects()["Deployment"]["spec"]["template"]["metadata"]["labels"]
    for objects, pod in ((k8s_objects(), container()), (k8s_web_objects(), proxy_container())):
        policy = objects["NetworkPolicy"]["spec"]
        labels = objects["Deployment"]["spec"]["template"]["metadata"]["labels"]
        assert (
            policy["podSelector"]["matchLabels"]
            == objects["Deployment"]["spec"]["selector"]["matchLabels"]
        )
        assert policy["podSelector"]["matchLabels"].items() <= labels.items()
        assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
        served = {p["name"] for p in pod["ports"]}
        assert allowed_ports(policy["ingress"]) == served, "every served port, nothing else"
        assert {db_port, 53} <= allowed_ports(policy["egress"])
    web_egress = k8s_web_objects()["NetworkPolicy"]["spec"]["egress"]
    (to_referee,) = [rule for rule in web_egress if GRPC_PORT in allowed_ports([rule])]
    (peer,) = to_referee["to"]
    assert peer["podSelector"]["matchLabels"] == referee_labels


# -- the web face on Kubernetes -------------------------------------------------------------------


def test_the_web_deployment_runs_the_web_command_against_the_referee_service() -> None:
    assert set(k8s_web_objects()) == WEB_KINDS
    for kind, obj in k8s_web_objects().items():
        assert obj["metadata"]["name"] == "domino-arena-web", kind
        assert "namespace" not in obj["metadata"], f"{kind} names a namespace"
    args = build_parser().parse_args(web_container()["args"])
    assert args.command == "web"
    assert (args.host, args.port) == ("127.0.0.1", WEB_PORT)
    assert args.forwarded_allow_ips == "127.0.0.1", "its nginx, in the same pod"
    referee_service = k8s_objects()["Service"]
    assert args.server == f"{referee_service['metadata']['name']}:{GRPC_PORT}"
    assert web_container()["image"] == container()["image"]


def test_the_web_face_scales_apart_and_its_service_selects_only_its_pods() -> None:
    deployment = k8s_web_objects()["Deployment"]
    assert deployment["spec"]["replicas"] >= 2
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    selector = k8s_web_objects()["Service"]["spec"]["selector"]
    assert selector.items() <= labels.items()
    referee_labels = k8s_objects()["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert not selector.items() <= referee_labels.items(), "the web Service would pick referees"
    (port,) = k8s_web_objects()["Service"]["spec"]["ports"]
    assert port["targetPort"] == "http"
    assert {p["name"]: p["containerPort"] for p in proxy_container()["ports"]} == {
        "http": PROXY_PORT
    }


def test_the_web_probes_ask_the_health_route_through_nginx_and_directly() -> None:
    """Ready once nginx and the web face behind it answer; the web face alive by compose's own
    probe (run against a real web face above), nginx alive while it accepts connections."""
    readiness = proxy_container()["readinessProbe"]
    assert readiness["httpGet"] == {"path": "/healthz", "port": "http"}
    assert proxy_container()["livenessProbe"]["tcpSocket"] == {"port": "http"}
    assert "readinessProbe" not in web_container()
    command = web_container()["livenessProbe"]["exec"]["command"]
    assert ["CMD", *command] == compose()["services"]["web"]["healthcheck"]["test"]


def test_the_web_container_is_unprivileged_and_reads_only_the_database_url() -> None:
    pod = k8s_web_objects()["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    for container_spec in (web_container(), proxy_container()):
        security = container_spec["securityContext"]
        assert security["allowPrivilegeEscalation"] is False
        assert security["readOnlyRootFilesystem"] is True
        assert security["capabilities"]["drop"] == ["ALL"]
    names = {variable["name"] for variable in web_container()["env"]}
    assert domino_variables(names) == WEB_ENV
    assert web_container()["env"][-1]["value"] == container()["env"][-1]["value"]
