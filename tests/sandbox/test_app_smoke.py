from sandbox import platform_specs


def test_index_lists_every_platform_with_its_sandbox_base_url(http, sandbox_origin):
    body = http.get("/").json()
    ids = {p["id"] for p in body["platforms"]}
    assert ids == {"ex", "seoul", "dart", "krx", "kdic", "edu", "hrdk", "law", "assembly", "gg"}
    for p in body["platforms"]:
        assert p["sandbox_base_url"].startswith(sandbox_origin + "/")


def test_healthz_reports_world_version(http, world):
    assert http.get("/healthz").json() == {"status": "ok", "world": "v1", "content_hash": world.content_hash}


def test_platform_mounts_keep_the_real_path_structure():
    for spec in platform_specs():
        real_path = spec.live_base_url.split(spec.host, 1)[1].split("/", 1)
        tail = "/" + real_path[1] if len(real_path) > 1 else ""
        assert spec.mount == spec.host_prefix + tail.rstrip("/")
