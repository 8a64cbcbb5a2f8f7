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


async def test_a_wrong_or_missing_key_is_answered_with_what_this_session_can_do():
    from mcp_gateway.catalog import load_catalog
    from mcp_gateway.runtime.runtime import ToolRuntime

    # no upstream is reached: the key is checked first, so the runtime needs no clients or secrets here
    runtime = ToolRuntime(load_catalog(), clients=None, secrets=None, profile="bench")
    args = {"corp_name": "삼성전자"}
    # a session with no dart key (an agent session whose model has not called the key tool yet): call it
    missing = await runtime.call("find_dart_corp_code", args, "fresh")
    wrong = await runtime.call("find_dart_corp_code", {**args, "KEY": "guessed"}, "fresh")
    assert missing.outcome.value == "missing_field" and wrong.outcome.value == "auth_error"
    for result in (missing, wrong):
        assert result.message.endswith("Call get_dart_api_key and pass the key it returns as KEY.")
    assert missing.message.startswith("find_dart_corp_code: missing required parameter 'KEY'.")
    # a session given its key (the bench puts it in the runtime context, and offers no key tool): pass that one
    runtime.session("given").issue_key_token("dart")
    for result in (await runtime.call("find_dart_corp_code", args, "given"),
                   await runtime.call("find_dart_corp_code", {**args, "KEY": "guessed"}, "given")):
        assert "get_dart_api_key" not in result.message
        assert result.message.endswith("Pass the dart key token this session was given (dart_api_key) as KEY, "
                                       "exactly as written.")
    # another missing parameter keeps its own description
    other = await runtime.call("get_dart_company_overview", {"KEY": "guessed"}, "given")
    assert other.outcome.value == "missing_field" and "'corp_code'" in other.message and "고유번호" in other.message
