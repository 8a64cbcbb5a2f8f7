import hashlib

from mcp_gateway.runtime.session import SessionStore, Workspace, canonical_json


def test_state_hash_is_sha256_of_the_canonical_serialization():
    ws = Workspace(watchlists={"관심": {"005930": "삼성전자"}}, notes={"b": "2", "a": "1"})
    expected = hashlib.sha256(canonical_json(ws.snapshot()).encode()).hexdigest()
    assert ws.state_hash() == expected
    assert canonical_json({"b": 1, "a": "가"}) == '{"a":"가","b":1}'


def test_insertion_order_does_not_change_the_hash():
    a = Workspace(notes={"x": "1", "y": "2"})
    b = Workspace(notes={"y": "2", "x": "1"})
    assert a.state_hash() == b.state_hash()
    assert a.state_hash() != Workspace().state_hash()


def test_sessions_are_isolated_and_resettable():
    store = SessionStore()
    one, two = store.get("one"), store.get("two")
    one.workspace.notes["k"] = "v"
    assert two.workspace.notes == {} and store.get("one").workspace.notes == {"k": "v"}
    store.reset("one")
    assert store.get("one").workspace.notes == {}


def test_key_tokens_are_per_session_and_stable_within_one():
    store = SessionStore()
    token = store.get("a").issue_key_token("dart")
    assert store.get("a").issue_key_token("dart") == token
    assert token not in store.get("b").key_tokens and store.get("a").key_tokens[token] == "dart"


def test_idle_sessions_are_forgotten_and_used_ones_kept():
    now = [0.0]
    store = SessionStore(idle_seconds=60, clock=lambda: now[0])
    store.get("idle").workspace.notes["k"] = "v"
    store.get("busy")
    now[0] = 50.0
    store.get("busy")
    now[0] = 100.0
    assert store.get("busy") is not None and len(store) == 1  # "idle" was unused for 100 s
    assert store.get("idle").workspace.notes == {}
