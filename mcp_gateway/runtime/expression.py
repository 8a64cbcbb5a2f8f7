"""evaluate_expression: arithmetic and symbolic expressions, parsed without eval.

The text is parsed with Python's ``ast`` and only a whitelist of node types is turned into a
sympy expression (numbers, + - * / // % **, unary signs, a few functions and constants). No
attribute access, no subscripts, no comprehensions, no names outside the whitelist: the model
can never reach Python. Limits on the text length, the number of parts, exponents, factorials
and the size of any power's result bound the work, so evaluation stays in the sub-millisecond
to few-millisecond range and runs inline (a worker thread with a timeout cost ~30 ms of GIL
hand-offs per call under a busy event loop, for no gain once the work is bounded).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

MAX_LENGTH = 2_000
MAX_NODES = 400
MAX_EXPONENT = 1_000
MAX_FACTORIAL = 500
MAX_RESULT_DIGITS = 10_000  # a power whose result would have more digits is refused


class _Vocabulary(NamedTuple):
    """sympy and what an expression may use of it: functions, constants, binary operators."""

    sympy: ModuleType
    functions: dict[str, Callable[..., Any]]
    constants: dict[str, Any]
    binary: dict[type[ast.operator], Callable[[Any, Any], Any]]


@functools.cache
def _vocabulary() -> _Vocabulary:
    """Built on the first expression: importing sympy costs ~0.4 s, and most processes that load the gateway
    (every `kopa` command) never evaluate one."""
    import sympy

    return _Vocabulary(
        sympy=sympy,
        functions={
            "sqrt": sympy.sqrt, "abs": sympy.Abs, "round": lambda x, n=0: sympy.Float(round(float(x), int(n))),
            "floor": sympy.floor, "ceil": sympy.ceiling, "log": sympy.log, "ln": sympy.log, "exp": sympy.exp,
            "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "min": sympy.Min, "max": sympy.Max,
            "factorial": lambda n: sympy.factorial(_bounded(n, MAX_FACTORIAL, "factorial argument")),
        },
        constants={"pi": sympy.pi, "e": sympy.E},
        binary={
            ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: sympy.floor(a / b), ast.Mod: lambda a, b: a % b,
            ast.Pow: lambda a, b: _power(a, b),
        },
    )


class ExpressionError(ValueError):
    """The expression is not allowed or could not be evaluated; the message says why."""


def _bounded(value: Any, limit: int, what: str) -> Any:
    if value.is_number and abs(value) > limit:
        raise ExpressionError(f"{what} {value} is larger than the limit {limit}")
    return value


def _power(base: Any, exponent: Any) -> Any:
    _bounded(exponent, MAX_EXPONENT, "exponent")
    if base.is_number and exponent.is_number and abs(base) > 1:
        digits = float(abs(exponent)) * float(_vocabulary().sympy.log(abs(base), 10).evalf(10))
        if digits > MAX_RESULT_DIGITS:
            raise ExpressionError(f"the power's result would have about {digits:,.0f} digits; "
                                  f"the limit is {MAX_RESULT_DIGITS:,}")
    return base ** exponent


def _build(node: ast.AST) -> Any:
    sympy, functions, constants, binary = _vocabulary()
    if isinstance(node, ast.Expression):
        return _build(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return sympy.Rational(str(node.value)) if isinstance(node.value, float) else sympy.Integer(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in binary:
        return binary[type(node.op)](_build(node.left), _build(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        value = _build(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Name):
        if node.id in constants:
            return constants[node.id]
        raise ExpressionError(f"unknown name {node.id[:40]!r}; allowed constants: {', '.join(constants)}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id not in functions:
            raise ExpressionError(f"unknown function {node.func.id[:40]!r}; allowed: {', '.join(sorted(functions))}")
        return functions[node.func.id](*(_build(a) for a in node.args))
    if isinstance(node, ast.Tuple):
        raise ExpressionError("commas only separate function arguments; write 1000, not 1,000")
    raise ExpressionError(f"{type(node).__name__} is not allowed in an expression")


def _evaluate(text: str) -> str:
    tree = ast.parse(text.replace("^", "**"), mode="eval")
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ExpressionError(f"the expression has more than {MAX_NODES} parts")
    value = _build(tree)
    sympy = _vocabulary().sympy
    if value.has(sympy.zoo, sympy.nan) or value == sympy.zoo:
        raise ExpressionError("the expression is undefined (division by zero?)")
    numeric = value.evalf(15)
    if numeric.is_Integer or (numeric.is_number and numeric == int(numeric) and abs(numeric) < 10**15):
        return str(int(numeric))
    if numeric.is_number:
        return str(sympy.Float(numeric, 15)).rstrip("0").rstrip(".")
    return str(value)


def evaluate_expression(text: str) -> str:
    """Evaluate ``text``; returns the value as a string. Raises ExpressionError with the reason."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("expression must be a non-empty string, e.g. '100 * (1680 - 532) / 532'")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is {len(text)} characters long; the limit is {MAX_LENGTH}")
    try:
        return _evaluate(text)
    except SyntaxError as exc:
        raise ExpressionError(f"could not parse the expression at column {exc.offset}: {exc.msg}") from None
    except ExpressionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, RecursionError) as exc:
        raise ExpressionError(f"could not evaluate the expression: {exc}") from None
