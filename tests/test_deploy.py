"""docker-compose.yml and its nginx file describe the topology the tests run."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_compose_has_redis_with_aof_two_apps_and_a_proxy() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    redis_cmd = services["redis"]["command"]
    assert "--appendonly" in redis_cmd and redis_cmd[redis_cmd.index("--appendonly") + 1] == "yes"
    assert any(v.endswith(":/data") for v in services["redis"]["volumes"])
    apps = [
        n
        for n, s in services.items()
        if s.get("build") == "." and not s.get("profiles") and "command" not in s
    ]
    assert len(apps) == 2
    for name in apps:
        assert services[name]["environment"]["BOULANGER_BROKER_URL"].startswith("redis://redis:")
    proxy = services["proxy"]
    assert proxy["ports"] == ["80:80", "443:443"]
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    for name in apps:
        assert f"server {name}:8000" in conf
    assert "proxy_set_header Upgrade $http_upgrade" in conf
    # Race sockets go to one replica per race (by URL), with a fallback.
    races = conf[conf.index("upstream boulanger_races") :]
    assert "hash $uri consistent;" in races[: races.index("}")]
    assert "location /ws/races/ {\n        proxy_pass http://boulanger_races;" in conf


def test_compose_has_a_cluster_profile_of_six_nodes_and_two_apps() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    cluster = {name: s for name, s in services.items() if "cluster" in s.get("profiles", ())}
    nodes = {name: s for name, s in cluster.items() if "redis-server" in s.get("command", [])}
    assert len(nodes) == 6
    addresses = []
    for name, node in nodes.items():
        command = node["command"]
        assert command[command.index("--cluster-enabled") + 1] == "yes"
        assert command[command.index("--appendonly") + 1] == "yes"
        assert any(v.endswith(":/data") for v in node["volumes"]), name
        addresses.append(node["networks"]["cluster"]["ipv4_address"])
    assert len(set(addresses)) == 6
    # The one-shot create: every node, one replica each, made only once.
    create = cluster["redis-cluster-create"]
    script = " ".join(create["command"])
    assert "--cluster create" in script and "--cluster-replicas 1" in script
    assert all(f"{address}:6379" in script for address in addresses)
    assert "cluster_state:ok ||" in script
    assert create["restart"] == "no"
    assert set(create["depends_on"]) == set(nodes)
    # Two app replicas on the cluster, with the replica wait, after the create.
    apps = {name: s for name, s in cluster.items() if s.get("build") == "." and "command" not in s}
    assert len(apps) == 2
    aliases = set()
    for app in apps.values():
        url = app["environment"]["BOULANGER_BROKER_URL"]
        assert url.startswith("redis-cluster://")
        assert {f"{a}:6379" for a in addresses[:3]} <= set(
            url.removeprefix("redis-cluster://").split(",")
        )
        assert app["environment"]["BOULANGER_REPLICA_WAIT"] == "1"
        cond = app["depends_on"]["redis-cluster-create"]["condition"]
        assert cond == "service_completed_successfully"
        aliases.update(app["networks"]["cluster"]["aliases"])
    # Named as deploy/nginx.conf names them, behind a proxy of their own.
    assert aliases == {"app1", "app2"}
    proxy = cluster["proxy-cluster"]
    assert proxy["ports"] == ["8081:80", "8443:443"]
    # The apps trust X-Forwarded-For from the cluster's proxy alone (its fixed address).
    proxy_ip = proxy["networks"]["cluster"]["ipv4_address"]
    for app in apps.values():
        assert app["environment"]["BOULANGER_FORWARDED_ALLOW_IPS"] == proxy_ip
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in proxy["volumes"]


def test_dockerfile_installs_the_package_and_serves_the_client() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-cache-dir ." in dockerfile
    assert "COPY client ./client" in dockerfile
    assert '"boulanger", "serve"' in dockerfile
