"""The docker-compose deployment, checked for structure where no Docker engine runs."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def default_shape() -> dict[str, Any]:
    """The services ``docker compose up`` starts: those in no profile."""
    return {name: s for name, s in compose()["services"].items() if not s.get("profiles")}


def test_services_are_redis_two_replicas_and_a_load_balancer() -> None:
    services = default_shape()
    assert set(services) == {"redis", "server1", "server2", "lb"}
    for name in ("server1", "server2"):
        command = services[name]["command"]
        assert command[:3] == ["python", "-m", "server"]
        assert "--redis" in command and command[command.index("--redis") + 1] == "redis://redis:6379/0"
        assert "0.0.0.0" in command  # reachable from the load balancer
        assert services[name]["depends_on"]["redis"]["condition"] == "service_healthy"
    assert services["lb"]["ports"] == ["8080:80"]
    assert {"server1", "server2"} <= set(services["lb"]["depends_on"])


def test_every_service_has_a_healthcheck() -> None:
    """Every one that keeps running (``cluster-init`` forms the cluster and exits)."""
    for name, service in compose()["services"].items():
        if name == "cluster-init":
            assert "restart" not in service
            continue
        check = service["healthcheck"]["test"]
        assert check[0] == "CMD" and len(check) > 1, name
    server_check = " ".join(compose()["services"]["server1"]["healthcheck"]["test"])
    assert "/healthz" in server_check


def test_redis_keeps_its_data() -> None:
    redis = compose()["services"]["redis"]
    assert redis["command"][redis["command"].index("--appendonly") + 1] == "yes"
    assert any(v.endswith(":/data") for v in redis["volumes"])


def test_load_balancer_upgrades_websockets_to_both_replicas() -> None:
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    upstream = re.search(r"upstream grip \{(.*?)\}", conf, re.S)
    assert upstream is not None
    assert "server1:8765" in upstream.group(1) and "server2:8765" in upstream.group(1)
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_set_header Connection $connection_upgrade;" in conf
    assert "proxy_http_version 1.1;" in conf
    mounts = compose()["services"]["lb"]["volumes"]
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in mounts
    assert any(m.startswith("./client/web:") for m in mounts)  # nginx serves the web client


def test_image_runs_the_server() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'CMD ["python", "-m", "server"' in dockerfile
    assert "pip install" in dockerfile


def test_the_cluster_profile_is_a_cluster_of_three_masters_with_replicas_behind_its_own_balancer() -> None:
    """``docker compose --profile cluster up cluster-lb``: the same servers, one ``--redis`` node's URL."""
    cluster = {name: s for name, s in compose()["services"].items() if s.get("profiles") == ["cluster"]}
    nodes = sorted(name for name in cluster if name.startswith("cluster-node-"))
    assert nodes == [f"cluster-node-{n}" for n in range(1, 7)]
    for name in nodes:
        command = cluster[name]["command"]
        assert command[command.index("--cluster-enabled") + 1] == "yes"
        assert command[command.index("--appendonly") + 1] == "yes"
        assert command[command.index("--cluster-announce-hostname") + 1] == name  # clients reach it by name
        assert any(v.endswith(":/data") for v in cluster[name]["volumes"])
    init = cluster["cluster-init"]
    assert "--cluster-replicas 1" in init["command"][0] and "--cluster create" in init["command"][0]
    assert set(init["depends_on"]) == set(nodes)
    for name, alias in (("cluster-server1", "server1"), ("cluster-server2", "server2")):
        command = cluster[name]["command"]
        assert command[command.index("--redis") + 1] == "redis://cluster-node-1:6379/0"
        assert command[command.index("--redis-replicas") + 1] == "1"
        assert cluster[name]["depends_on"]["cluster-init"]["condition"] == "service_completed_successfully"
        assert cluster[name]["networks"]["cluster"]["aliases"] == [alias]  # what deploy/nginx.conf names
        assert "/healthz" in " ".join(cluster[name]["healthcheck"]["test"])
    lb = cluster["cluster-lb"]
    assert lb["ports"] == ["8081:80"] and lb["networks"] == ["cluster"]
    assert lb["volumes"] == compose()["services"]["lb"]["volumes"]  # the same nginx configuration
    assert all("cluster" not in s.get("networks", []) for s in default_shape().values())
