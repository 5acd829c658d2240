"""The scaled-out Kubernetes manifests (deploy/k8s/cluster) agree with each other and the code.

Gateways and hosts are one image in two roles (``serve --role gateway|host``), NATS sits between
them and PostgreSQL stays outside; runners (``serve --role runner``) run the hosted bots under
gVisor and dial the gateways. What a schema cannot see is pinned here: each Deployment names
its role, probes ask the port it serves, the NATS URL the pods get reaches the NATS Service and
its routes name the StatefulSet's pods, the budgets and policies select pods that exist, no
secret is written in clear, the runners admit nothing in and reach only the gateways, PostgreSQL
and DNS, and the web face is the single referee's but for whom it follows.
kustomize itself renders each overlay in the test below when kubectl is there (.ci/run does it
too, with kubernetes-validate on every object).
"""

from __future__ import annotations

import copy
import os
import re
import shutil
import subprocess
import tomllib
from functools import cache
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

import kubernetes_validate  # type: ignore[import-untyped]
import nkeys
import pytest
import trustme
import yaml
from sqlalchemy.engine import make_url

from domino_arena.server.cli import broker_flags
from domino_arena.server.cli.arguments import CliError
from domino_arena.server.cli.main import build_parser, main

ROOT: Final = Path(__file__).resolve().parents[2]
K8S: Final = ROOT / "deploy" / "k8s"
CLUSTER: Final = K8S / "cluster"
KUBERNETES_VERSION: Final = "1.27.0"
GRPC_PORT: Final = 50051
METRICS_PORT: Final = 9100
ROLES: Final = ("gateway", "host")
"""The roles that serve gRPC (a port, probes, a Service)."""
RUNNER: Final = "runner"
"""The role that runs hosted bots: no port, no NATS, under gVisor (runner.yaml)."""
RUNTIME_CLASS: Final = "gvisor"
RUNSC: Final = "runsc"
NATS_IMAGE: Final = "nats:2.10-alpine"
COMPONENT: Final = "app.kubernetes.io/component"
NATS_CLIENT_SECRET: Final = "domino-arena-nats-client"
NATS_TLS_SECRET: Final = "domino-arena-nats-tls"
EXTERNAL_SECRETS: Final = frozenset({NATS_CLIENT_SECRET, NATS_TLS_SECRET})
"""The Secrets the operator creates before applying (they hold keys and certificates, which no
placeholder could stand for: nats.yaml's head)."""
NATS_FILES: Final = {
    "DOMINO_ARENA_NATS_NKEY": "nkey.seed",
    "DOMINO_ARENA_NATS_TLS_CA": "ca.crt",
    "DOMINO_ARENA_NATS_TLS_CERT": "tls.crt",
    "DOMINO_ARENA_NATS_TLS_KEY": "tls.key",
}
"""What the roles' broker flags read (server/cli/broker_flags.py), and its key in the Secret."""
PROXY: Final = "proxy"
"""The name of the nginx container in the web face's pod (deploy/nginx.conf)."""

Object = dict[str, Any]

# -- reading the manifests ------------------------------------------------------------------------


def load_all(path: Path) -> list[Object]:
    with path.open(encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


@cache
def kustomization() -> Object:
    (found,) = load_all(CLUSTER / "kustomization.yaml")
    return found


@cache
def objects() -> dict[tuple[str, str], Object]:
    """Every object the cluster kustomization lists, by (kind, name)."""
    found: dict[tuple[str, str], Object] = {}
    for name in kustomization()["resources"]:
        for doc in load_all(CLUSTER / name):
            key = (doc["kind"], doc["metadata"]["name"])
            assert key not in found, f"{key} twice"
            found[key] = doc
    return found


def of_kind(kind: str) -> list[Object]:
    return [obj for (k, _), obj in objects().items() if k == kind]


def workloads() -> list[Object]:
    return [*of_kind("Deployment"), *of_kind("StatefulSet")]


def workload(component: str) -> Object:
    (found,) = [w for w in workloads() if pod_labels(w).get(COMPONENT) == component]
    return found


def pod_labels(obj: Object) -> dict[str, str]:
    labels: dict[str, str] = obj["spec"]["template"]["metadata"]["labels"]
    return labels


def containers(obj: Object) -> list[Object]:
    found: list[Object] = obj["spec"]["template"]["spec"]["containers"]
    return found


def container(obj: Object) -> Object:
    """The workload's own container (the web face's pod also runs its nginx, named proxy)."""
    (found,) = [c for c in containers(obj) if c["name"] != PROXY]
    assert isinstance(found, dict)
    return found


def container_ports(obj: Object) -> dict[str, int]:
    """The ports the pod serves, whichever of its containers serves each."""
    return {p["name"]: p["containerPort"] for c in containers(obj) for p in c.get("ports", [])}


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and selector.items() <= labels.items()


def selected(selector: dict[str, str]) -> list[Object]:
    """The workloads whose pods ``selector`` (matchLabels) selects."""
    return [w for w in workloads() if selects(selector, pod_labels(w))]


def flag(args: list[str], name: str) -> str:
    assert args.count(name) == 1, f"{name} given {args.count(name)} times in {args}"
    return args[args.index(name) + 1]


def environment(obj: Object) -> dict[str, str]:
    """A container's environment as Kubernetes makes it: the ConfigMap's keys (all or one by
    one), the Secret's values, the downward API's ``metadata.name``, then each ``$(VAR)``
    expanded in order."""
    values: dict[str, str] = {}
    for source in container(obj).get("envFrom", []):
        values |= objects()[("ConfigMap", source["configMapRef"]["name"])]["data"]
    for variable in container(obj).get("env", []):
        if "value" in variable:
            text = variable["value"]
            for name in re.findall(r"\$\((\w+)\)", text):
                assert name in values, f"{variable['name']} uses $({name}) before it is defined"
            values[variable["name"]] = re.sub(r"\$\((\w+)\)", lambda m: values[m.group(1)], text)
        elif "secretKeyRef" in variable["valueFrom"]:
            ref = variable["valueFrom"]["secretKeyRef"]
            if ref["name"] in EXTERNAL_SECRETS:  # made by the operator: a stand-in
                values[variable["name"]] = f"<{ref['name']}/{ref['key']}>"
                continue
            values[variable["name"]] = objects()[("Secret", ref["name"])]["stringData"][ref["key"]]
        elif "configMapKeyRef" in variable["valueFrom"]:
            ref = variable["valueFrom"]["configMapKeyRef"]
            values[variable["name"]] = objects()[("ConfigMap", ref["name"])]["data"][ref["key"]]
        else:
            assert variable["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
            values[variable["name"]] = f"{obj['metadata']['name']}-0"
    return values


def domino_variables(obj: Object) -> set[str]:
    return {v["name"] for v in container(obj).get("env", []) if v["name"].startswith("DOMINO_")}


def nats_conf() -> str:
    text: str = objects()[("ConfigMap", "domino-arena-nats")]["data"]["nats.conf"]
    return text


def conf_value(key: str) -> str:
    found = re.search(rf"^\s*{key}:\s*(\S+)\s*$", nats_conf(), re.MULTILINE)
    assert found, f"nats.conf sets no {key}"
    return found.group(1)


def seconds(duration: str) -> int:
    assert duration.endswith("s"), duration
    return int(duration[:-1])


def project_version() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])


def serve_knows_roles() -> bool:
    """Whether this tree's ``serve`` takes ``--role`` (the scale-out's command line)."""
    try:
        build_parser().parse_args(["serve", "--role", "host"])
    except CliError as error:
        if "--role" in str(error):
            return False
        raise
    return True


# -- the files and the rendering -----------------------------------------------------------------


def test_the_kustomization_lists_every_manifest_and_pins_every_image() -> None:
    manifests = {p.name for p in CLUSTER.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization()["resources"]) == manifests
    tags = {image["name"]: image["newTag"] for image in kustomization()["images"]}
    assert tags == {"domino-arena": project_version(), "nats": NATS_IMAGE.split(":")[1]}
    images = {container(w)["image"] for w in workloads()}
    assert images == {f"domino-arena:{project_version()}", NATS_IMAGE}
    for (kind, name), obj in objects().items():
        # The one cluster-scoped object keeps the name the platforms give gVisor (GKE's too).
        assert name.startswith("domino-arena") or (kind, name) == ("RuntimeClass", RUNTIME_CLASS)
        assert "namespace" not in obj["metadata"], f"{kind} {name} names a namespace"


@pytest.mark.parametrize(
    "path", sorted(set(CLUSTER.glob("*.yaml")) - {CLUSTER / "kustomization.yaml"}), ids=str
)
def test_every_manifest_validates_against_the_kubernetes_schemas(path: Path) -> None:
    for doc in load_all(path):
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{path.name}: {doc['kind']} {doc['metadata']['name']}: {error.message}")


@pytest.mark.skipif(
    shutil.which("kubectl") is None and not os.environ.get("CI"),
    reason="kubectl (Debian's kubernetes-client) is not installed; CI installs it",
)
@pytest.mark.parametrize("overlay", [K8S, CLUSTER], ids=lambda p: str(p.relative_to(ROOT)))
def test_kustomize_renders_every_overlay_into_valid_objects(overlay: Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is missing: apt-get install kubernetes-client"
    done = subprocess.run(
        [kubectl, "kustomize", str(overlay)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    rendered = [doc for doc in yaml.safe_load_all(done.stdout) if doc is not None]
    for doc in rendered:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    if overlay == CLUSTER:
        assert {(d["kind"], d["metadata"]["name"]) for d in rendered} == set(objects())


# -- gateways and hosts ---------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_each_role_is_a_deployment_whose_args_name_it(role: str) -> None:
    deployment = workload(role)
    assert deployment["kind"] == "Deployment"
    assert container(deployment)["name"] == role
    args = container(deployment)["args"]
    assert args[0] == "serve"
    assert flag(args, "--role") == role
    assert flag(args, "--host") == "0.0.0.0"
    assert int(flag(args, "--port")) == container_ports(deployment)["grpc"] == GRPC_PORT
    assert int(flag(args, "--metrics-port")) == container_ports(deployment)["metrics"]
    assert container_ports(deployment)["metrics"] == METRICS_PORT
    # The node name is the pod's, from the downward API: every log line and record names it.
    assert flag(args, "--node") == "$(POD_NAME)"
    (pod_name,) = [v for v in container(deployment)["env"] if v["name"] == "POD_NAME"]
    assert pod_name["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    # The broker, the database and the token come from the environment, never the command line.
    assert not {"--nats", "--db", "--admin-token"} & set(args)


def test_every_deployment_serves_in_a_role_but_the_web_face() -> None:
    commands = []
    for deployment in of_kind("Deployment"):
        args = container(deployment)["args"]
        commands.append(flag(args, "--role") if args[0] == "serve" else args[0])
    assert sorted(commands) == sorted([*ROLES, RUNNER, "web"])


@pytest.mark.skipif(not serve_knows_roles(), reason="`serve --role` is not in this tree yet")
@pytest.mark.parametrize("role", ROLES)
def test_serve_accepts_each_deployments_args(role: str) -> None:
    args = build_parser().parse_args(container(workload(role))["args"])
    assert args.command == "serve"
    assert args.role == role
    assert (args.host, args.port, args.metrics_port) == ("0.0.0.0", GRPC_PORT, METRICS_PORT)
    assert args.node == "$(POD_NAME)"


@pytest.mark.skipif(not serve_knows_roles(), reason="`serve --role` is not in this tree yet")
def test_serve_documents_the_variables_the_pods_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    help_text = capsys.readouterr().out
    for role in (*ROLES, RUNNER):
        for name in sorted(domino_variables(workload(role))):
            assert name in help_text, f"'domino-arena serve --help' does not mention ${name}"


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("probe", ["startupProbe", "readinessProbe", "livenessProbe"])
def test_every_probe_is_a_native_grpc_health_check_on_the_port(role: str, probe: str) -> None:
    """The overall status (no ``service``): SERVING only while the process has NATS."""
    check = container(workload(role))[probe]
    assert set(check) & {"grpc", "httpGet", "tcpSocket", "exec"} == {"grpc"}
    assert check["grpc"] == {"port": container_ports(workload(role))["grpc"]}


@pytest.mark.parametrize("role", ROLES)
def test_a_nats_restart_makes_pods_unready_but_does_not_restart_them(role: str) -> None:
    pod = container(workload(role))

    def patience(probe: str) -> int:
        return int(pod[probe]["periodSeconds"] * pod[probe].get("failureThreshold", 3))

    assert patience("livenessProbe") >= 120 > patience("readinessProbe")
    assert patience("startupProbe") >= 60, "the first start migrates and waits for NATS"


def test_bots_dial_the_gateways_and_everyone_else_the_hosts() -> None:
    for role in ROLES:
        service = objects()[("Service", f"domino-arena-{role}")]
        assert selected(service["spec"]["selector"]) == [workload(role)]
        ports = {p["name"]: p for p in service["spec"]["ports"]}
        assert set(ports) == {"grpc", "metrics"}
        assert ports["grpc"]["port"] == GRPC_PORT
        for name, port in ports.items():
            assert port["targetPort"] == name and name in container_ports(workload(role))
        annotations = service["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert int(annotations["prometheus.io/port"]) == METRICS_PORT
    web_args = container(workload("web"))["args"]
    assert flag(web_args, "--server") == f"domino-arena-gateway:{GRPC_PORT}"


def test_the_nats_url_the_pods_get_reaches_the_nats_client_service() -> None:
    urls = {environment(workload(role))["DOMINO_ARENA_NATS"] for role in ROLES}
    (url,) = urls
    parts = urlsplit(url)
    assert parts.scheme == "tls", "the roles dial NATS with TLS"
    assert parts.username is None and parts.password is None, "no credentials in a ConfigMap"
    service = objects()[("Service", parts.hostname or "")]
    (port,) = [p for p in service["spec"]["ports"] if p["port"] == parts.port]
    nats = workload("nats")
    assert selected(service["spec"]["selector"]) == [nats]
    assert container_ports(nats)[port["targetPort"]] == int(conf_value("port")) == parts.port


def test_the_nats_routes_name_every_server_through_the_headless_service() -> None:
    nats = workload("nats")
    headless = objects()[("Service", nats["spec"]["serviceName"])]
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is True
    assert selected(headless["spec"]["selector"]) == [nats]
    cluster_port = container_ports(nats)["cluster"]
    routes = re.findall(r"nats://[\w.-]+:\d+", nats_conf().split("routes", 1)[1])
    name, service = nats["metadata"]["name"], headless["metadata"]["name"]
    replicas = nats["spec"]["replicas"]
    assert replicas == 3
    assert routes == [f"nats://{name}-{i}.{service}:{cluster_port}" for i in range(replicas)]
    assert int(conf_value("port")) == container_ports(nats)["nats"]
    assert int(conf_value("http_port")) == container_ports(nats)["monitor"]
    assert conf_value("server_name") == "$POD_NAME" and "POD_NAME" in environment(nats)
    assert container(nats)["image"] == NATS_IMAGE


def test_nats_keeps_its_files_and_pid_where_they_are_mounted_and_drains_before_it_stops() -> None:
    nats = workload("nats")
    mounts = {m["name"]: m["mountPath"] for m in container(nats)["volumeMounts"]}
    (claim,) = nats["spec"]["volumeClaimTemplates"]
    assert conf_value("store_dir") == mounts[claim["metadata"]["name"]]
    pid_file = conf_value("pid_file")
    assert Path(pid_file).parent == Path(mounts["pid"])
    assert container(nats)["lifecycle"]["preStop"]["exec"]["command"] == [
        "nats-server",
        f"-sl=ldm={pid_file}",
    ]
    config = next(v for v in nats["spec"]["template"]["spec"]["volumes"] if v["name"] == "config")
    assert config["configMap"]["name"] == "domino-arena-nats"
    assert f"{mounts['config']}/nats.conf" in container(nats)["args"]
    lame_duck = seconds(conf_value("lame_duck_duration")) + seconds(
        conf_value("lame_duck_grace_period")
    )
    assert nats["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > lame_duck


@pytest.mark.skipif(shutil.which("nats-server") is None, reason="nats-server is not installed")
def test_nats_accepts_its_configuration(tmp_path: Path) -> None:
    """With the Secrets' files it would mount (a CA, a certificate, an nkey, made here)."""
    ca = trustme.CA()
    server = ca.issue_cert("domino-arena-nats", "*.domino-arena-nats-headless")
    folder = tmp_path / "tls"
    folder.mkdir()
    (folder / "ca.crt").write_bytes(ca.cert_pem.bytes())
    (folder / "tls.crt").write_bytes(b"".join(pem.bytes() for pem in server.cert_chain_pems))
    (folder / "tls.key").write_bytes(server.private_key_pem.bytes())
    mount = nats_mounts()["tls"]
    path = tmp_path / "nats.conf"
    path.write_text(nats_conf().replace(f"{mount}/", f"{folder}/"), encoding="utf-8")
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    public = nkeys.from_seed(bytearray(seed)).public_key.decode()
    done = subprocess.run(
        ["nats-server", "-t", "-c", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "POD_NAME": "domino-arena-nats-0", "ARENA_NKEY": public},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def nats_mounts() -> dict[str, str]:
    """Where the NATS container mounts each of its volumes, by volume name."""
    return {m["name"]: m["mountPath"] for m in container(workload("nats"))["volumeMounts"]}


def tls_blocks() -> list[str]:
    """The bodies of nats.conf's ``tls { ... }`` blocks, in order."""
    return re.findall(r"^\s*tls \{\n(.*?)^\s*\}", nats_conf(), re.MULTILINE | re.DOTALL)


def test_nats_requires_verified_tls_from_clients_and_routes_and_lets_in_the_roles_nkey() -> None:
    client_tls, route_tls = tls_blocks()
    assert route_tls.strip() in nats_conf().split("cluster {", 1)[1], "the routes' TLS"
    mount = nats_mounts()["tls"]
    for block in (client_tls, route_tls):
        settings = dict(re.findall(r"^\s*(\w+):\s*(\S+)\s*$", block, re.MULTILINE))
        assert settings["verify"] == "true", block
        for key, name in (("cert_file", "tls.crt"), ("key_file", "tls.key"), ("ca_file", "ca.crt")):
            assert settings[key] == f"{mount}/{name}", block
    volumes = {v["name"]: v for v in workload("nats")["spec"]["template"]["spec"]["volumes"]}
    assert volumes["tls"]["secret"]["secretName"] == NATS_TLS_SECRET
    assert "token" not in nats_conf().split("authorization", 1)[1].split("}", 1)[0]
    assert re.search(r"authorization \{\s*users: \[\s*\{ nkey: \$ARENA_NKEY \}", nats_conf())
    (nkey,) = [v for v in container(workload("nats"))["env"] if v["name"] == "ARENA_NKEY"]
    assert nkey["valueFrom"]["secretKeyRef"] == {"name": NATS_CLIENT_SECRET, "key": "nkey.pub"}


@pytest.mark.parametrize("role", ROLES)
def test_each_role_dials_nats_with_the_files_of_the_mounted_client_secret(role: str) -> None:
    """The roles' broker flags (by their variables) name files of domino-arena-nats-client,
    mounted read-only and readable by the pod's group alone; ``serve`` accepts them."""
    pod = workload(role)["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if "secret" in v]
    assert volume["secret"] == {"secretName": NATS_CLIENT_SECRET, "defaultMode": 0o440}
    (mount,) = [m for m in container(workload(role))["volumeMounts"] if m["name"] == volume["name"]]
    assert mount["readOnly"] is True
    values = environment(workload(role))
    for variable, key in NATS_FILES.items():
        assert values[variable] == f"{mount['mountPath']}/{key}", variable
    flags = {f"{broker_flags.ENV_PREFIX}{env}" for env, _ in broker_flags.FLAGS.values()}
    assert set(NATS_FILES) <= flags
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsUser"]


# -- the runners ----------------------------------------------------------------------------------


def test_the_runner_is_a_deployment_that_dials_the_gateways_and_serves_nothing() -> None:
    runner = workload(RUNNER)
    assert runner["kind"] == "Deployment"
    spec = container(runner)
    assert spec["name"] == RUNNER
    args = spec["args"]
    assert args[0] == "serve"
    assert flag(args, "--role") == RUNNER
    assert flag(args, "--node") == "$(POD_NAME)"
    (pod_name,) = [v for v in spec["env"] if v["name"] == "POD_NAME"]
    assert pod_name["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    # The gateways' Service, on the port the bots dial: a hosted bot is one more remote bot.
    host, _, port = flag(args, "--referee").rpartition(":")
    gateways = objects()[("Service", host)]
    assert selected(gateways["spec"]["selector"]) == [workload("gateway")]
    assert int(port) in {p["port"] for p in gateways["spec"]["ports"] if p["name"] == "grpc"}
    # No port, no broker, no metrics, no admin token, nothing on the command line to hide.
    assert not {"--port", "--metrics-port", "--nats", "--db", "--admin-token"} & set(args)
    assert container_ports(runner) == {}
    assert "NATS_URL" not in environment(runner) and "envFrom" not in spec
    # The versions are unpacked where a volume is mounted: the root file system is read-only.
    mounts = {m["mountPath"]: m["name"] for m in spec["volumeMounts"]}
    volume = mounts[flag(args, "--hosting-dir")]
    (found,) = [v for v in runner["spec"]["template"]["spec"]["volumes"] if v["name"] == volume]
    assert "sizeLimit" in found["emptyDir"]


@pytest.mark.skipif(not serve_knows_roles(), reason="`serve --role` is not in this tree yet")
def test_serve_accepts_the_runners_args() -> None:
    args = build_parser().parse_args(container(workload(RUNNER))["args"])
    assert (args.command, args.role) == ("serve", RUNNER)
    assert args.referee == f"domino-arena-gateway:{GRPC_PORT}"
    assert args.node == "$(POD_NAME)"
    assert args.hosting_dir == "/var/lib/domino-arena/hosted"
    assert args.max_hosted >= 1 and args.idle_stop > 0 and args.lease_seconds > 0
    assert args.referee_tls_ca is None, "the gateways serve plaintext inside the cluster"


def test_the_runner_has_no_probe_and_must_stay_up_before_it_counts() -> None:
    """No port to ask and the runner is the container's process: no probe; minReadySeconds
    keeps a runner that exits at start (no user namespaces on its node) from counting."""
    runner = workload(RUNNER)
    assert not {"startupProbe", "readinessProbe", "livenessProbe"} & set(container(runner))
    assert runner["spec"]["minReadySeconds"] >= 10
    assert runner["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert "lifecycle" not in container(runner), "no Service endpoints to leave first"


def test_the_runners_run_under_gvisor_on_the_nodes_that_have_it() -> None:
    runtime = objects()[("RuntimeClass", RUNTIME_CLASS)]
    assert runtime["apiVersion"] == "node.k8s.io/v1"
    assert runtime["handler"] == RUNSC
    (label,) = runtime["scheduling"]["nodeSelector"].items()
    assert label == ("domino-arena/runtime", RUNTIME_CLASS)
    classes = {
        w["metadata"]["name"]: w["spec"]["template"]["spec"].get("runtimeClassName")
        for w in workloads()
    }
    assert classes.pop(workload(RUNNER)["metadata"]["name"]) == RUNTIME_CLASS
    assert set(classes.values()) == {None}, "only the runners need gVisor"


def test_the_runners_memory_holds_bots_at_their_caps() -> None:
    """The limit covers several bots at their whole address space (512 MiB by default) and
    scratch (64 MiB) together, beside the runner itself."""
    resources = container(workload(RUNNER))["resources"]
    mib = {"Mi": 1, "Gi": 1024}
    limit = resources["limits"]["memory"]
    assert int(limit[:-2]) * mib[limit[-2:]] >= 8 * (512 + 64)


# -- the database and the secrets -----------------------------------------------------------------


@pytest.mark.parametrize("component", [*ROLES, RUNNER, "web"])
def test_the_database_url_is_the_single_referees_built_from_the_same_keys(component: str) -> None:
    (base_configmap,) = load_all(K8S / "configmap.yaml")
    (base_secret,) = load_all(K8S / "secret.yaml")
    configmap = objects()[("ConfigMap", "domino-arena")]
    secret = objects()[("Secret", "domino-arena")]
    assert configmap["data"].items() >= base_configmap["data"].items()
    assert secret["stringData"] == base_secret["stringData"]
    (base_deployment,) = load_all(K8S / "deployment.yaml")
    template = {v["name"]: v.get("value") for v in container(base_deployment)["env"]}
    mine = {v["name"]: v.get("value") for v in container(workload(component))["env"]}
    assert mine["DOMINO_ARENA_DB"] == template["DOMINO_ARENA_DB"]
    url = make_url(environment(workload(component))["DOMINO_ARENA_DB"])
    assert url.drivername == "postgresql"
    assert (url.host, url.port) == (configmap["data"]["DB_HOST"], int(configmap["data"]["DB_PORT"]))
    assert url.password == secret["stringData"]["DB_PASSWORD"]


def test_no_secret_is_written_in_clear() -> None:
    """The Secret holds placeholders only; secrets reach pods through secretKeyRef alone."""
    (secret,) = of_kind("Secret")
    assert "data" not in secret
    for key, value in secret["stringData"].items():
        assert value.startswith("CHANGE-ME"), f"{key} is not a placeholder"
    for configmap in of_kind("ConfigMap"):
        # nginx's server_tokens (whether error pages show its version) is the one word allowed.
        data = {k: v.replace("server_tokens off;", "") for k, v in configmap["data"].items()}
        text = yaml.safe_dump(data)
        assert not re.search(r"password|token|secret", text, re.IGNORECASE), configmap["data"]
    for obj in workloads():
        for spec in containers(obj):
            literal = yaml.safe_dump({"args": spec.get("args", []), "env": spec.get("env", [])})
            for value in secret["stringData"].values():
                assert value not in literal, f"{obj['metadata']['name']} writes a secret in clear"
    broker = {"DOMINO_ARENA_NATS", *NATS_FILES}
    assert domino_variables(workload("gateway")) == {"DOMINO_ARENA_DB", *broker}
    assert domino_variables(workload(RUNNER)) == {"DOMINO_ARENA_DB"}
    assert domino_variables(workload("host")) == {
        "DOMINO_ARENA_DB",
        *broker,
        "DOMINO_ARENA_ADMIN_TOKEN",
    }
    (token,) = [v for v in container(workload("host"))["env"] if "ADMIN_TOKEN" in v["name"]]
    assert token["valueFrom"]["secretKeyRef"]["name"] == secret["metadata"]["name"]


# -- disruptions, placement, shutdown -------------------------------------------------------------


def test_every_disruption_budget_selects_one_workload_and_every_workload_has_one() -> None:
    budgets = {}
    for budget in of_kind("PodDisruptionBudget"):
        (target,) = selected(budget["spec"]["selector"]["matchLabels"])
        assert budget["spec"]["selector"] == target["spec"]["selector"]
        budgets[target["metadata"]["name"]] = budget["spec"]
    assert set(budgets) == {w["metadata"]["name"] for w in workloads()}
    for component in (*ROLES, RUNNER, "nats"):
        obj = workload(component)
        assert budgets[obj["metadata"]["name"]]["maxUnavailable"] == 1, component
        assert obj["spec"]["replicas"] >= 2, f"one {component} would be a budget of nothing"


@pytest.mark.parametrize("role", [*ROLES, RUNNER])
def test_two_replicas_of_a_role_never_share_a_node(role: str) -> None:
    spec = workload(role)["spec"]["template"]["spec"]
    (by_node,) = [
        c for c in spec["topologySpreadConstraints"] if c["topologyKey"] == "kubernetes.io/hostname"
    ]
    assert (by_node["maxSkew"], by_node["whenUnsatisfiable"]) == (1, "DoNotSchedule")
    assert selected(by_node["labelSelector"]["matchLabels"]) == [workload(role)]
    strategy = workload(role)["spec"]["strategy"]
    assert strategy["rollingUpdate"]["maxUnavailable"] == 0, "a new pod first, then the old goes"


def test_the_nats_servers_never_share_a_node() -> None:
    affinity = workload("nats")["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert selected(term["labelSelector"]["matchLabels"]) == [workload("nats")]


@pytest.mark.parametrize("role", ROLES)
def test_the_grace_period_covers_the_pre_stop_pause_and_the_shutdown_grace(role: str) -> None:
    pod = workload(role)["spec"]["template"]["spec"]
    command = container(workload(role))["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    shutdown_grace = build_parser().parse_args(["serve"]).shutdown_grace
    assert pod["terminationGracePeriodSeconds"] >= int(command[1]) + shutdown_grace + 10


def test_every_container_requests_resources_caps_memory_and_is_never_cpu_throttled() -> None:
    for obj in workloads():
        for spec in containers(obj):
            resources = spec["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]), spec["name"]
            assert set(resources["limits"]) == {"memory"}, spec["name"]


def test_every_pod_runs_unprivileged() -> None:
    """No root, no capability, no privilege escalation, a read-only root and the runtime's
    seccomp profile, for every container; the runner's alone is Unconfined (bubblewrap's
    unshare and mount, which RuntimeDefault keeps for CAP_SYS_ADMIN), and only under gVisor."""
    unconfined = []
    for obj in workloads():
        pod = obj["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert "hostUsers" not in pod and "hostPID" not in pod and "hostNetwork" not in pod
        for spec in containers(obj):
            security = spec["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, spec["name"]
            assert security["readOnlyRootFilesystem"] is True, spec["name"]
            assert security["capabilities"] == {"drop": ["ALL"]}, spec["name"]
            assert "privileged" not in security and "procMount" not in security, spec["name"]
            assert not {"runAsUser", "runAsNonRoot"} & set(security), spec["name"]
            if "seccompProfile" in security:
                unconfined.append((obj, spec["name"], security["seccompProfile"]))
    assert unconfined == [(workload(RUNNER), RUNNER, {"type": "Unconfined"})]
    assert workload(RUNNER)["spec"]["template"]["spec"]["runtimeClassName"] == RUNTIME_CLASS


# -- the network ----------------------------------------------------------------------------------


def policy_of(component: str) -> Object:
    (found,) = [
        p
        for p in of_kind("NetworkPolicy")
        if selected(p["spec"]["podSelector"]["matchLabels"]) == [workload(component)]
    ]
    spec: Object = found["spec"]
    return spec


def peers(rules: list[Object], port: int | str) -> list[list[Object]]:
    """The workloads each rule admitting ``port`` names as peers ([] for a rule open to all)."""
    found: list[list[Object]] = []
    for rule in rules:
        if port in {p["port"] for p in rule["ports"]}:
            named = [*rule.get("to", []), *rule.get("from", [])]
            found.append([w for peer in named for w in peer_pods(peer)])
    return found


def peer_pods(peer: Object) -> list[Object]:
    return selected(peer["podSelector"]["matchLabels"]) if "podSelector" in peer else []


@pytest.mark.parametrize("component", [*ROLES, RUNNER, "nats", "web"])
def test_every_policy_admits_what_its_pods_serve_and_nothing_else(component: str) -> None:
    policy = policy_of(component)
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
    admitted = {p["port"] for rule in policy["ingress"] for p in rule["ports"]}
    assert admitted == set(container_ports(workload(component)))


@pytest.mark.parametrize("role", ROLES)
def test_gateways_and_hosts_reach_nats_postgresql_and_dns_and_not_each_other(role: str) -> None:
    egress = policy_of(role)["egress"]
    nats_port = container_ports(workload("nats"))["nats"]
    assert peers(egress, nats_port) == [[workload("nats")]]
    db_port = int(objects()[("ConfigMap", "domino-arena")]["data"]["DB_PORT"])
    assert peers(egress, db_port) == [[]] and peers(egress, 53) == [[]]
    assert not peers(egress, GRPC_PORT), "gateways and hosts talk through NATS only"


def test_runners_reach_the_gateways_postgresql_and_dns_and_nothing_else() -> None:
    policy = policy_of(RUNNER)
    assert policy["ingress"] == [], "a runner serves nothing"
    egress = policy["egress"]
    assert peers(egress, GRPC_PORT) == [[workload("gateway")]]
    db_port = int(objects()[("ConfigMap", "domino-arena")]["data"]["DB_PORT"])
    assert peers(egress, db_port) == [[]] and peers(egress, 53) == [[]]
    allowed = {p["port"] for rule in egress for p in rule["ports"]}
    assert allowed == {GRPC_PORT, db_port, 53}, "never NATS, a host, nor anywhere else"
    # The gateways admit it: their gRPC port is open to every bot, wherever it runs.
    assert [] in peers(policy_of("gateway")["ingress"], "grpc")


def test_only_gateways_and_hosts_reach_the_nats_clients_port_and_the_web_reaches_gateways() -> None:
    ingress = policy_of("nats")["ingress"]
    (clients,) = peers(ingress, "nats")
    assert sorted(w["metadata"]["name"] for w in clients) == [
        workload(role)["metadata"]["name"] for role in ROLES
    ]
    assert peers(ingress, "cluster") == [[workload("nats")]]
    assert peers(policy_of("web")["egress"], GRPC_PORT) == [[workload("gateway")]]


def test_the_web_face_is_the_single_referees_but_follows_the_gateways() -> None:
    expected = copy.deepcopy(load_all(K8S / "web.yaml"))
    deployment, _, _, policy, _ = expected
    args = container(deployment)["args"]
    args[args.index("--server") + 1] = f"domino-arena-gateway:{GRPC_PORT}"
    for rule in policy["spec"]["egress"]:
        for peer in rule.get("to", []):
            peer["podSelector"]["matchLabels"][COMPONENT] = "gateway"
    assert load_all(CLUSTER / "web.yaml") == expected
