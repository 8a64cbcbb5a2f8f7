from appliance.metadb import (
    SandboxSession,
    WorldBuild,
    close_session,
    latest_world_builds,
    open_metadb,
    record,
)


def test_world_builds_and_sessions_are_recorded_in_a_real_sqlite_file(tmp_path):
    url = "sqlite:///" + str(tmp_path / "sub" / "kopa.db")
    engine = open_metadb(url)
    record(engine, WorldBuild(version="v1", seed=1, scale=1.0, content_hash="abc", path="/w.duckdb", seconds=3.5))
    session = record(engine, SandboxSession(world_version="v1", content_hash="abc", host="127.0.0.1",
                                            port=8088, faults="none"))
    close_session(engine, session.id)
    engine.dispose()
    reopened = open_metadb(url)  # a new engine on the same file sees the rows
    (build,) = latest_world_builds(reopened)
    assert (build.version, build.content_hash, build.seconds) == ("v1", "abc", 3.5)
    assert (tmp_path / "sub" / "kopa.db").exists()
