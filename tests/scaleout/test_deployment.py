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


def test_services_are_redis_two_replicas_and_a_load_balancer() -> None:
    services = compose()["services"]
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
    for name, service in compose()["services"].items():
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
