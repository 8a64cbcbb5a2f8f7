"""ToolRuntime: the one way every caller runs a tool.

    runtime = ToolRuntime(catalog, clients, secrets, profile="chat")
    result = await runtime.call("search_school_info", {"ATPT_OFCDC_SC_CODE": "T10"}, session_id="s1")

A call validates the arguments against the tool's schema and the input limits
(``mcp_gateway.limits``: string length, array length, total size), resolves the API key by profile
(``chat`` injects the real key; ``bench`` requires the episode-scoped token that the
``get_<platform>_api_key`` tool hands out, so no real key ever reaches a model), translates
paging, and goes to the platform client. Built-in tools (expression, keys, workspace) run
here. Whatever happens, the caller gets a ``ToolResult`` with an outcome class; only a bug in
our own code raises.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..catalog.export import PROFILE_GENERICS
from ..catalog.spec import TOOL_NAME_MAX, ParamKind, ToolSpec
from ..limits import DEFAULT_LIMITS, InputLimits, LimitExceeded
from .expression import ExpressionError, evaluate_expression
from .result import Outcome, ToolResult
from .session import Session, SessionStore
from .validation import ArgumentError, shown, validate_arguments

PROFILES = PROFILE_GENERICS  # which generic parameters the model sees (and fills) in each profile
DEFAULT_PAGE_SIZE = 10
KEY_TOOL_PREFIX, KEY_TOOL_SUFFIX = "get_", "_api_key"


class ToolRuntime:
    """Runs tools for sessions; holds the catalog, the clients, the secrets and the sessions."""

    def __init__(self, catalog: Any, clients: Any, secrets: Any, profile: str = "chat",
                 sessions: SessionStore | None = None, limits: InputLimits = DEFAULT_LIMITS):
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
        self.catalog, self.clients, self.secrets, self.profile = catalog, clients, secrets, profile
        self.visible, self.limits = PROFILES[profile], limits
        self.sessions = sessions or SessionStore()
        self._builtins: dict[str, Callable[[ToolSpec, dict[str, Any], Session], ToolResult]] = {
            "evaluate_expression": self._expression,
            "add_to_watchlist": self._watch_add, "remove_from_watchlist": self._watch_remove,
            "get_watchlist": self._watch_get, "save_report": self._report_save, "list_reports": self._report_list,
            "write_note": self._note_write, "read_note": self._note_read,
        }

    def session(self, session_id: str) -> Session:
        return self.sessions.get(session_id)

    def reset_session(self, session_id: str) -> None:
        """Forget the session's state; the next call under this id starts a fresh one.

        Dropped rather than replaced by an empty session: the MCP server resets every session its
        client ends, and an empty one kept for each would grow with every session ever closed.
        """
        self.sessions.drop(session_id)

    def input_schema(self, spec: ToolSpec) -> dict[str, Any]:
        return spec.input_schema(include_generic=self.visible)

    async def call(self, tool: str, args: dict[str, Any] | None, session_id: str) -> ToolResult:
        correlation = uuid.uuid4().hex
        result = await self._call(tool, args or {}, self.session(session_id))
        result.correlation_id = correlation
        return result

    async def _call(self, tool: str, args: dict[str, Any], session: Session) -> ToolResult:
        if not isinstance(tool, str) or len(tool) > TOOL_NAME_MAX:  # no name lookup (or echo) of a huge name
            what = f"{len(tool):,} characters long" if isinstance(tool, str) else f"a {type(tool).__name__}"
            return ToolResult(tool=str(tool)[:TOOL_NAME_MAX], outcome=Outcome.SCHEMA_MISMATCH,
                              message=f"unknown tool: the name is {what}; tool names are strings of at most "
                                      f"{TOOL_NAME_MAX} characters")
        try:
            spec = self.catalog.get(tool)
        except KeyError as exc:  # UnknownToolError: its message lists the nearest names
            return ToolResult(tool=tool, outcome=Outcome.SCHEMA_MISMATCH, message=str(exc.args[0] if exc.args else exc))
        try:
            checked = validate_arguments(spec, args, self.visible)
            self.limits.check_arguments(tool, args)  # after the types: a wrong type is reported as one
        except ArgumentError as exc:
            if exc.param is not None and exc.param.kind is ParamKind.API_KEY:  # its prose names a key tool: say
                return ToolResult(tool=tool, outcome=Outcome.MISSING_FIELD,  # what to do in this session instead
                                  message=f"{tool}: missing required parameter {exc.param.name!r}. "
                                          f"{_key_hint(_platform(spec), session)}")
            outcome = Outcome.MISSING_FIELD if exc.missing else Outcome.SCHEMA_MISMATCH
            return ToolResult(tool=tool, outcome=outcome, message=str(exc))
        except LimitExceeded as exc:
            return ToolResult(tool=tool, outcome=Outcome.SCHEMA_MISMATCH, message=str(exc))
        args = checked
        if spec.endpoint is None:
            if tool.startswith(KEY_TOOL_PREFIX) and tool.endswith(KEY_TOOL_SUFFIX):
                token = session.issue_key_token(spec.platform)
                return ToolResult(tool=tool, outcome=Outcome.GENERIC_SUCCESS, records=[{"api_key": token}])
            return self._builtins[tool](spec, args, session)
        return await self._upstream(spec, args, session)

    async def _upstream(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        endpoint = spec.endpoint
        assert endpoint is not None
        key = self._key(spec, args, session)
        if isinstance(key, ToolResult):
            return key
        page_no, page_size = 1, DEFAULT_PAGE_SIZE
        upstream: dict[str, Any] = {}
        for p in spec.params:
            value = args.get(p.name)
            if p.kind is ParamKind.PAGE_NO and value is not None:
                page_no = value
            elif p.kind is ParamKind.PAGE_SIZE and value is not None:
                page_size = value
            elif p.kind is ParamKind.NORMAL and value not in (None, ""):
                upstream[p.upstream or p.name] = value
        if page_size > endpoint.max_page_size:
            return ToolResult(tool=spec.name, outcome=Outcome.SCHEMA_MISMATCH,
                              message=f"{spec.name}: numOfRows may be at most {endpoint.max_page_size}; "
                                      f"got {page_size}. Ask for further pages with pageNo instead.")
        page = await self.clients.fetch(endpoint, upstream, page_no=page_no, page_size=page_size, key=key,
                                        tool=spec.name)
        outcome = page.outcome
        if outcome.ok:
            semantic = any(p.kind is ParamKind.NORMAL and args.get(p.name) not in (None, "") for p in spec.params)
            outcome = Outcome.SEMANTIC_SUCCESS if semantic else Outcome.GENERIC_SUCCESS
        message = None if outcome.ok else self.secrets.redact(page.message or f"upstream answered {page.code}")
        result = ToolResult(tool=spec.name, outcome=outcome, records=_as_declared(spec, page.records),
                            total_count=page.total,
                            page_no=page_no, page_size=page_size, upstream_code=page.code, message=message,
                            upstream={"url": page.url, "http_status": page.http_status, "attempts": page.attempts})
        if page.replay_key is not None:  # the page's key covers the upstream params, hence the outcome too
            result._replay_key = (spec.name, page.replay_key)
        return result

    def _key(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> str | ToolResult:
        platform = _platform(spec)
        if ParamKind.API_KEY in self.visible and any(p.kind is ParamKind.API_KEY for p in spec.params):
            token = next((args[p.name] for p in spec.params if p.kind is ParamKind.API_KEY and p.name in args), None)
            if token is None or session.key_tokens.get(token) != platform:
                return ToolResult(tool=spec.name, outcome=Outcome.AUTH_ERROR,
                                  message=f"{spec.name}: invalid API key. {_key_hint(platform, session)}")
        return self.secrets.key(platform)

    # ---- built-in tools -------------------------------------------------------------------

    @staticmethod
    def _done(spec: ToolSpec, records: list[dict[str, Any]]) -> ToolResult:
        outcome = Outcome.SEMANTIC_SUCCESS if spec.params else Outcome.GENERIC_SUCCESS
        return ToolResult(tool=spec.name, outcome=outcome, records=records, total_count=len(records))

    @staticmethod
    def _refuse(spec: ToolSpec, message: str) -> ToolResult:
        return ToolResult(tool=spec.name, outcome=Outcome.SCHEMA_MISMATCH, message=f"{spec.name}: {message}")

    def _expression(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        try:
            return self._done(spec, [{"expression": args["expression"], "value": evaluate_expression(args["expression"])}])
        except ExpressionError as exc:
            return self._refuse(spec, str(exc))

    def _watch_add(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        items = session.workspace.watchlists.setdefault(args["list_name"], {})
        items[args["item"]] = args.get("note") or ""
        return self._watch_get(spec, args, session)

    def _watch_remove(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        items = session.workspace.watchlists.get(args["list_name"], {})
        if args["item"] not in items:
            return self._refuse(spec, f"{shown(args['item'])} is not in watchlist {shown(args['list_name'])}")
        del items[args["item"]]
        if not items:
            del session.workspace.watchlists[args["list_name"]]
        return self._watch_get(spec, args, session)

    def _watch_get(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        items = session.workspace.watchlists.get(args["list_name"], {})
        return self._done(spec, [{"list_name": args["list_name"], "item": i, "note": n} for i, n in sorted(items.items())])

    def _report_save(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        session.workspace.reports[args["title"]] = args["content"]
        return self._done(spec, [{"title": args["title"], "length": len(args["content"])}])

    def _report_list(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        return self._done(spec, [{"title": t, "length": len(c)} for t, c in sorted(session.workspace.reports.items())])

    def _note_write(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        session.workspace.notes[args["key"]] = args["text"]
        return self._done(spec, [{"key": args["key"], "text": args["text"]}])

    def _note_read(self, spec: ToolSpec, args: dict[str, Any], session: Session) -> ToolResult:
        if args["key"] not in session.workspace.notes:
            return self._refuse(spec, f"no note under {shown(args['key'])}")
        return self._done(spec, [{"key": args["key"], "text": session.workspace.notes[args["key"]]}])


def _as_declared(spec: ToolSpec, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Portals send a one-element list as a bare object; fields declared as arrays get a list back."""
    arrays = [f.name for f in spec.output if f.type == "array"]
    if not arrays:
        return records
    for record in records:
        for name in arrays:
            if isinstance(record.get(name), dict):
                record[name] = [record[name]]
    return records


def _platform(spec: ToolSpec) -> str:
    return spec.endpoint.platform if spec.endpoint else spec.platform


def _key_hint(platform: str, session: Session) -> str:
    """What a model that got a key wrong should do in this session. A session given the platform's key token (the
    bench puts it in the runtime context as ``<platform>_api_key``; a key tool's call leaves one too) is told to pass
    that one: its task may not offer the key tool, and a model sent to call a tool it lacks wastes its turns."""
    if platform in session.key_tokens.values():
        return (f"Pass the {platform} key token this session was given ({platform}{KEY_TOOL_SUFFIX}) as KEY, exactly "
                "as written.")
    return f"Call {KEY_TOOL_PREFIX}{platform}{KEY_TOOL_SUFFIX} and pass the key it returns as KEY."
