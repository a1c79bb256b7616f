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
    apps = [name for name, s in services.items() if s.get("build") == "."]
    assert len(apps) == 2
    for name in apps:
        assert services[name]["environment"]["BOULANGER_BROKER_URL"].startswith("redis://redis:")
    proxy = services["proxy"]
    assert proxy["ports"] == ["8080:80"]
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    for name in apps:
        assert f"server {name}:8000" in conf
    assert "proxy_set_header Upgrade $http_upgrade" in conf
    # Race sockets go to one replica per race (by URL), with a fallback.
    races = conf[conf.index("upstream boulanger_races") :]
    assert "hash $uri consistent;" in races[: races.index("}")]
    assert "location /ws/races/ {\n        proxy_pass http://boulanger_races;" in conf


def test_dockerfile_installs_the_package_and_serves_the_client() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-cache-dir ." in dockerfile
    assert "COPY client ./client" in dockerfile
    assert '"boulanger", "serve"' in dockerfile
